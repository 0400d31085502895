"""Non-saturating GAN on toy 2-D data with a compiled discriminator, gradient penalty and a label-smoothing schedule."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 2))
D = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
D_c = torch.compile(D, backend="eager")
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.9))
gp_weight = 10.0
steps, batch = 40, 64


def sample_real(n):
    angle = torch.rand(n) * 6.2831
    return torch.stack([angle.cos(), angle.sin()], dim=1) * 2.0 + 0.05 * torch.randn(n, 2)


for step in range(steps):
    smooth = 1.0 - 0.1 * (1 - step / steps)  # real label goes 0.9 -> 1.0
    real = sample_real(batch)
    fake = G(torch.randn(batch, 8))

    d_real = D_c(real)
    d_fake = D_c(fake.detach())
    loss_d = F.binary_cross_entropy_with_logits(d_real, torch.full_like(d_real, smooth)) \
        + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
    alpha = torch.rand(batch, 1)
    interp = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
    grad = torch.autograd.grad(D_c(interp).sum(), interp, create_graph=True)[0]
    gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
    opt_d.zero_grad()
    (loss_d + gp_weight * gp).backward()
    opt_d.step()

    d_gen = D_c(fake)
    loss_g = F.binary_cross_entropy_with_logits(d_gen, torch.ones_like(d_gen))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if step % 10 == 0:
        print(f"step {step} loss_d {loss_d.item():.3f} gp {gp.item():.3f} loss_g {loss_g.item():.3f}")
