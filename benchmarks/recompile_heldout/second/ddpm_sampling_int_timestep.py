"""DDPM ancestral sampling loop that calls a compiled denoiser with the integer timestep."""
import math
import torch
import torch.nn as nn

T = 20
betas = torch.linspace(1e-4, 0.02, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)

class Denoiser(nn.Module):
    def __init__(self, dim=16, temb=8):
        super().__init__()
        self.temb = temb
        self.net = nn.Sequential(nn.Linear(dim + temb, 64), nn.SiLU(), nn.Linear(64, dim))
    def forward(self, x, t):
        freqs = torch.exp(-math.log(10000) * torch.arange(self.temb // 2) / (self.temb // 2))
        emb = torch.cat([torch.sin(t * freqs), torch.cos(t * freqs)]).expand(x.shape[0], -1)
        return self.net(torch.cat([x, emb], dim=-1))

model = torch.compile(Denoiser().eval(), backend="eager")

@torch.no_grad()
def sample(n=4, dim=16):
    x = torch.randn(n, dim)
    for t in reversed(range(T)):
        eps = model(x, t)
        coef = betas[t] / torch.sqrt(1 - alphas_cumprod[t])
        mean = (x - coef * eps) / torch.sqrt(alphas[t])
        x = mean + torch.sqrt(betas[t]) * torch.randn_like(x) if t > 0 else mean
    return x

print(sample().shape)
