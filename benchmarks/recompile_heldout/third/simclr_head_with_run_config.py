"""SimCLR-style NT-Xent training where a run-config dict (also holding step and lr bookkeeping) is passed to the compiled loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.compile(backend="eager")
def nt_xent(z1, z2, cfg):
    if cfg["normalize"]:
        z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    z = torch.cat([z1, z2], 0)
    sim = z @ z.t() / cfg["temperature"]
    sim = sim.masked_fill(torch.eye(z.shape[0], dtype=torch.bool), float("-inf"))
    n = z1.shape[0]
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


cfg = {"temperature": 0.5, "normalize": True, "step": 0, "lr": 0.0, "run_name": "simclr-toy"}
encoder = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 64))
opt = torch.optim.SGD(encoder.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=25)
data = torch.randn(512, 32)

for step in range(25):
    x = data[torch.randint(0, 512, (64,))]
    v1 = x + 0.1 * torch.randn_like(x)
    v2 = x * (torch.rand_like(x) > 0.2)
    cfg["step"] = step
    cfg["lr"] = sched.get_last_lr()[0]
    loss = nt_xent(encoder(v1), encoder(v2), cfg)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 8 == 0:
        print(f"{cfg['run_name']} step {cfg['step']} lr {cfg['lr']:.4f} loss {loss.item():.4f}")
