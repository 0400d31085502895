"""Hinge-loss GAN on toy 2-D data with a compiled generator and a label-smoothing schedule on the discriminator targets."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))

    def forward(self, z):
        return self.net(z)


G = Generator()
G.compile(backend="eager")
D = nn.Sequential(nn.Linear(2, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=4e-4, betas=(0.0, 0.9))
epochs, iters, batch = 4, 10, 128

for epoch in range(epochs):
    margin = 1.0 - 0.2 * epoch / (epochs - 1)  # smoothed hinge margin
    for it in range(iters):
        real = torch.randn(batch, 2) * 0.3 + torch.tensor([1.0, -1.0])
        z = torch.randn(batch, 16)
        fake = G(z)
        loss_d = torch.relu(margin - D(real)).mean() + torch.relu(margin + D(fake.detach())).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

        fake = G(torch.randn(batch, 16))
        loss_g = -D(fake).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    print(f"epoch {epoch} margin {margin:.2f} loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")
