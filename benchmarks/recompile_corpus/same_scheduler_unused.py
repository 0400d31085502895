"""A scheduler steps the optimizer's learning rate, but the compiled loss never reads it."""

import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


@torch.compile(backend="eager")
def loss_fn(prediction, target):
    return torch.nn.functional.mse_loss(prediction, target)


x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(5):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    optimizer.step()
    scheduler.step()
