"""Beta-VAE on random binary images with a linearly annealed KL weight passed to a compiled ELBO loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d_in=784, d_h=256, d_z=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU())
        self.mu = nn.Linear(d_h, d_z)
        self.logvar = nn.Linear(d_h, d_z)
        self.dec = nn.Sequential(nn.Linear(d_z, d_h), nn.ReLU(), nn.Linear(d_h, d_in))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


@torch.compile(backend="eager")
def elbo_loss(logits, x, mu, logvar, beta):
    recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
    return recon + beta * kl, recon, kl


model = VAE()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = (torch.rand(512, 784) > 0.7).float()
warmup_steps = 20

for step in range(40):
    x = data[torch.randint(0, 512, (64,))]
    beta = min(1.0, step / warmup_steps)
    logits, mu, logvar = model(x)
    loss, recon, kl = elbo_loss(logits, x, mu, logvar, beta)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} beta {beta:.2f} recon {recon.item():.1f} kl {kl.item():.2f}")
