"""Exponential moving average of model weights with a warmup-adjusted decay applied by a compiled update."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
ema_model = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.SGD(model.parameters(), lr=0.05)

@torch.compile(backend="eager")
def ema_update(ema_params, params, decay):
    for e, p in zip(ema_params, params):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)

def get_decay(step, max_decay=0.999, inv_gamma=1.0, power=2 / 3):
    return min(max_decay, 1 - (1 + step / inv_gamma) ** -power)

for step in range(10):
    x = torch.randn(16, 8)
    loss = F.mse_loss(model(x), x.sum(1, keepdim=True))
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(list(ema_model.parameters()), list(model.parameters()), get_decay(step))
    if step % 3 == 0:
        with torch.no_grad():
            print(step, round(loss.item(), 4), round(F.mse_loss(ema_model(x), x.sum(1, keepdim=True)).item(), 4))
