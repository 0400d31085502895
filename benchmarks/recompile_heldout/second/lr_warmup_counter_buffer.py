"""Model that tracks its own warmup progress in a registered buffer and scales its residual branch by it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class WarmupResidualNet(nn.Module):
    def __init__(self, dim=24, warmup_steps=6):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.branch = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.out = nn.Linear(dim, 1)
        self.warmup_steps = warmup_steps
        self.register_buffer("num_steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.training:
            self.num_steps += 1
        alpha = (self.num_steps.float() / self.warmup_steps).clamp(max=1.0)
        h = self.inp(x)
        return self.out(h + alpha * self.branch(h))

model = WarmupResidualNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model = torch.compile(model, backend="eager")
for step in range(12):
    x = torch.randn(16, 24)
    loss = F.mse_loss(model(x).squeeze(-1), x.mean(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(step, round(loss.item(), 4), int(model.num_steps))
