"""A compiled update always called under `torch.no_grad()`: the grad mode never changes."""

import torch


@torch.compile(backend="eager")
def ema_update(average, value, decay):
    average.mul_(decay).add_(value, alpha=1 - decay)


average = torch.zeros(4)
for step in range(6):
    with torch.no_grad():
        ema_update(average, torch.randn(4), 0.99)
