"""Training a small MLP with a compiled Adam step and a StepLR schedule."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)


@torch.compile(backend="eager")
def opt_step():
    opt.step()


for epoch in range(4):
    for _ in range(3):
        x, y = torch.randn(16, 10), torch.randn(16, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt_step()
    sched.step()
