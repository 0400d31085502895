"""Multi-epoch regression on a TensorDataset of 100 samples with a DataLoader (batch size 16)."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(100, 6)
y = X @ torch.randn(6, 1) + 0.1 * torch.randn(100, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def train_step(xb, yb):
    loss = nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    return loss


for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        train_step(xb, yb)
        opt.step()
