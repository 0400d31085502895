"""Progressive-depth curriculum: a residual MLP stack trained with more active blocks each stage via model.depth."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ProgressiveNet(nn.Module):
    def __init__(self, d=64, max_depth=6, n_out=5):
        super().__init__()
        self.inp = nn.Linear(16, d)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU()) for _ in range(max_depth))
        self.head = nn.Linear(d, n_out)
        self.depth = 2

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks[:self.depth]:
            h = h + blk(h)
        return self.head(h)


model = ProgressiveNet()
model.compile(backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x_all, y_all = torch.randn(512, 16), torch.randint(0, 5, (512,))

for stage, depth in enumerate([2, 4, 6]):
    model.depth = depth
    for it in range(4):
        idx = torch.randint(0, 512, (64,))
        loss = F.cross_entropy(model(x_all[idx]), y_all[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"stage {stage} depth {model.depth} loss {loss.item():.3f}")
