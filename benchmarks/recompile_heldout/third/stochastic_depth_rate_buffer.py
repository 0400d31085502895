"""Residual MLP with stochastic depth whose drop probability (kept in a buffer) is increased every epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropPathBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.f = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.register_buffer("drop_prob", torch.tensor(0.0))

    def forward(self, x):
        keep = 1.0 - self.drop_prob
        mask = (torch.rand(x.shape[0], 1) < keep).to(x.dtype)
        return x + self.f(x) * mask / keep


class ResMLP(nn.Module):
    def __init__(self, d=48, depth=4):
        super().__init__()
        self.stem = nn.Linear(10, d)
        self.blocks = nn.ModuleList(DropPathBlock(d) for _ in range(depth))
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


model = ResMLP()
model.compile(backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(4):
    rate = 0.05 * epoch
    for i, blk in enumerate(model.blocks):
        blk.drop_prob.fill_(rate * (i + 1) / len(model.blocks))  # linear decay rule over depth
    for it in range(8):
        x = torch.randn(64, 10)
        y = (x[:, 0] > 0).long()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} max_drop {model.blocks[-1].drop_prob.item():.3f} loss {loss.item():.3f}")
