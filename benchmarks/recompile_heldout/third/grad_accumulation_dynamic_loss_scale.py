"""Gradient accumulation over micro-batches with a manual dynamic loss scaler (backoff on overflow, growth after clean steps)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
ACCUM, MICRO = 4, 16

model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
fwd = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scale, growth_interval, clean_steps = 2.0 ** 12, 5, 0
data, targets = torch.randn(ACCUM * MICRO * 12, 32), torch.randint(0, 10, (ACCUM * MICRO * 12,))

for step in range(12):
    opt.zero_grad(set_to_none=True)
    total = 0.0
    for k in range(ACCUM):
        s = (step * ACCUM + k) * MICRO
        loss = F.cross_entropy(fwd(data[s:s + MICRO]), targets[s:s + MICRO]) / ACCUM
        (loss * scale).backward()
        total += loss.item()
    grads = [p.grad for p in model.parameters()]
    if step == 3:
        grads[0][0, 0] = float("inf")  # simulate an overflow
    if any(not torch.isfinite(g).all() for g in grads):
        scale /= 2
        clean_steps = 0
        print(f"step {step} overflow -> scale {scale:.0f}")
        continue
    for g in grads:
        g.div_(scale)
    opt.step()
    clean_steps += 1
    if clean_steps % growth_interval == 0:
        scale *= 2
    print(f"step {step} loss {total:.4f} scale {scale:.0f}")
