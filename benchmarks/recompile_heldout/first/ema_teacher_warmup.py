"""Mean-teacher style training where the EMA decay ramps up over the first steps."""
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 10))
teacher = copy.deepcopy(student).requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.05)


@torch.compile(backend="eager")
def ema_update(decay):
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.mul_(decay).add_(s, alpha=1 - decay)


for step in range(20):
    x = torch.randn(16, 10)
    loss = nn.functional.mse_loss(student(x), teacher(x + 0.1 * torch.randn_like(x)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    decay = min(0.999, (1 + step) / (10 + step))
    ema_update(decay)
