"""Gradient accumulation with a compiled forward/backward helper and clipping done in the outer loop."""
import torch
import torch.nn as nn

torch.manual_seed(0)
ACCUM = 4
model = nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Linear(40, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def forward_backward(x, y):
    loss = nn.functional.mse_loss(model(x), y) / ACCUM
    loss.backward()
    return loss.detach()


micro = 0
running = 0.0
for batch in range(16):
    x, y = torch.randn(8, 20), torch.randn(8, 1)
    running += forward_backward(x, y).item()
    micro += 1
    if micro == ACCUM:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        micro, running = 0, 0.0
