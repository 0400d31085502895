"""Lightning-like module whose compiled training_step records the loss every few batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class LitRegressor(nn.Module):
    def __init__(self, log_every_n_steps=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
        self.log_every_n_steps = log_every_n_steps
        self.logged = {}

    @torch.compile(backend="eager")
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x).squeeze(-1), y)
        if batch_idx % self.log_every_n_steps == 0:
            self.logged[f"train_loss_{batch_idx}"] = loss.detach()
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

def fit(module, loader, max_epochs=2):
    opt = module.configure_optimizers()
    for epoch in range(max_epochs):
        for batch_idx, batch in enumerate(loader):
            loss = module.training_step(batch, batch_idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
    print({k: round(v.item(), 4) for k, v in module.logged.items()})

ds = TensorDataset(torch.randn(96, 10), torch.randn(96))
fit(LitRegressor(), DataLoader(ds, batch_size=8))
