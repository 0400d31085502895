"""Tiny VAE trained with KL annealing where the KL weight is kept in a tensor buffer."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d=16, z=4):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Linear(z, d)
        self.register_buffer("kl_weight", torch.tensor(0.0))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        zs = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = nn.functional.mse_loss(self.dec(zs), x)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
        return recon + self.kl_weight * kl


vae = VAE()
cvae = torch.compile(vae, backend="eager")
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(25):
    vae.kl_weight.fill_(min(1.0, step / 10))
    loss = cvae(torch.randn(32, 16))
    opt.zero_grad()
    loss.backward()
    opt.step()
