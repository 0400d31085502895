"""Training a small transformer stack with activation (gradient) checkpointing under torch.compile."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

class Block(nn.Module):
    def __init__(self, dim=32, heads=2):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))

class Encoder(nn.Module):
    def __init__(self, depth=3, use_checkpoint=True):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(depth))
        self.use_checkpoint = use_checkpoint
        self.head = nn.Linear(32, 4)
    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_checkpoint else blk(x)
        return self.head(x.mean(1))

model = Encoder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model, backend="eager")
for step in range(8):
    x, y = torch.randn(4, 10, 32), torch.randint(0, 4, (4,))
    loss = F.cross_entropy(compiled(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
