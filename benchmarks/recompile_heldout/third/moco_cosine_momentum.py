"""MoCo-style contrastive pretraining with a queue and a momentum key encoder whose momentum follows a cosine schedule."""
import copy
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
DIM, QUEUE, B, STEPS, TAU = 32, 256, 32, 30, 0.2

encoder_q = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, DIM))
encoder_k = copy.deepcopy(encoder_q).requires_grad_(False)
query_encoder = torch.compile(encoder_q, backend="eager")
queue = F.normalize(torch.randn(QUEUE, DIM), dim=1)
opt = torch.optim.SGD(encoder_q.parameters(), lr=0.03, momentum=0.9)
data = torch.randn(1024, 64)


def augment(x):
    return x * (1 + 0.1 * torch.randn_like(x)) + 0.05 * torch.randn_like(x)


for step in range(STEPS):
    m = 1 - (1 - 0.99) * (math.cos(math.pi * step / STEPS) + 1) / 2  # 0.99 -> 1.0
    x = data[torch.randint(0, 1024, (B,))]
    q = F.normalize(query_encoder(augment(x)), dim=1)
    with torch.no_grad():
        for pq, pk in zip(encoder_q.parameters(), encoder_k.parameters()):
            pk.mul_(m).add_(pq.detach(), alpha=1 - m)
        k = F.normalize(encoder_k(augment(x)), dim=1)
    l_pos = (q * k).sum(1, keepdim=True)
    l_neg = q @ queue.t()
    logits = torch.cat([l_pos, l_neg], 1) / TAU
    loss = F.cross_entropy(logits, torch.zeros(B, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    queue = torch.cat([k, queue[:-B]], 0)
    if step % 10 == 0:
        print(f"step {step} momentum {m:.4f} loss {loss.item():.3f}")
