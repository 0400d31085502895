"""Keeps an exponential moving average of model weights with a compiled update and fixed decay."""
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 16))
ema_model = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
EMA_DECAY = 0.995


@torch.compile(backend="eager")
def update_ema(ema, online, decay):
    with torch.no_grad():
        for e, p in zip(ema.parameters(), online.parameters()):
            e.lerp_(p, 1.0 - decay)


for step in range(20):
    x = torch.randn(32, 16)
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_ema(ema_model, model, EMA_DECAY)
