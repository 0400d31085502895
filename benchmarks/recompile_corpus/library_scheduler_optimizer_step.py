"""A compiled optimizer step with a learning-rate scheduler: the float `lr` in `param_groups` is
guarded where Adam reads it, one recompile after the scheduler's first step."""

import torch
from torch import nn

model = nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


@torch.compile(backend="eager")
def optimizer_step():
    optimizer.step()  # recompile: number


x = torch.randn(2, 4)
for step in range(5):
    model(x).sum().backward()
    optimizer_step()
    scheduler.step()
