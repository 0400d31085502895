"""AdamW with a tensor learning rate, compiled step, and CosineAnnealingLR schedule."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4))
opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(3e-3), weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)


@torch.compile(backend="eager")
def opt_step():
    opt.step()


for step in range(20):
    x = torch.randn(32, 8)
    target = torch.randint(0, 4, (32,))
    loss = nn.functional.cross_entropy(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt_step()
    sched.step()
