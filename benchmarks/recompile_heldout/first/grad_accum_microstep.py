"""Gradient accumulation over 4 micro-batches with a compiled step that takes the micro-step index."""
import torch
import torch.nn as nn

torch.manual_seed(0)
ACCUM = 4
model = nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Linear(40, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def micro_step(x, y, micro):
    loss = nn.functional.mse_loss(model(x), y) / ACCUM
    loss.backward()
    if (micro + 1) % ACCUM == 0:
        for p in model.parameters():
            p.grad.clamp_(-1.0, 1.0)
    return loss.detach()


for micro in range(16):
    x, y = torch.randn(8, 20), torch.randn(8, 1)
    micro_step(x, y, micro)
    if (micro + 1) % ACCUM == 0:
        opt.step()
        opt.zero_grad()
