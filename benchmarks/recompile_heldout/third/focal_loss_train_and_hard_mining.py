"""Detector-style classifier trained with a compiled focal loss, also used per-sample (reduction='none') to mine hard examples."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile(backend="eager")
def focal_loss(logits, target, gamma=2.0, reduction="mean"):
    ce = F.cross_entropy(logits, target, reduction="none")
    pt = torch.exp(-ce)
    loss = (1 - pt) ** gamma * ce
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


model = nn.Sequential(nn.Linear(24, 96), nn.ReLU(), nn.Linear(96, 6))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
pool_x, pool_y = torch.randn(1024, 24), torch.randint(0, 6, (1024,))
hard_idx = torch.randint(0, 1024, (64,))

for epoch in range(3):
    for it in range(8):
        idx = torch.cat([torch.randint(0, 1024, (32,)), hard_idx[:32]])
        loss = focal_loss(model(pool_x[idx]), pool_y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        per_sample = focal_loss(model(pool_x), pool_y, reduction="none")
    hard_idx = per_sample.topk(64).indices
    print(f"epoch {epoch} train {loss.item():.4f} pool mean {per_sample.mean().item():.4f}")
