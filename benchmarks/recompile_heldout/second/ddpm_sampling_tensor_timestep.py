"""DDPM sampling loop passing a batched timestep tensor to a compiled noise-prediction network."""
import torch
import torch.nn as nn

T = 25
betas = torch.linspace(1e-4, 0.02, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)

class TimeMLP(nn.Module):
    def __init__(self, dim=16, hidden=64):
        super().__init__()
        self.t_embed = nn.Embedding(T, hidden)
        self.inp = nn.Linear(dim, hidden)
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, dim))
    def forward(self, x, t):
        return self.out(self.inp(x) + self.t_embed(t))

model = TimeMLP().eval()
denoise = torch.compile(model, backend="eager")

@torch.no_grad()
def p_sample_loop(shape):
    x = torch.randn(shape)
    for i in reversed(range(T)):
        t = torch.full((shape[0],), i, dtype=torch.long)
        eps = denoise(x, t)
        a, ab, b = alphas[t][:, None], alphas_cumprod[t][:, None], betas[t][:, None]
        x = (x - (1 - a) / torch.sqrt(1 - ab) * eps) / torch.sqrt(a)
        if i > 0:
            x = x + torch.sqrt(b) * torch.randn_like(x)
    return x

samples = p_sample_loop((8, 16))
print(samples.mean().item())
