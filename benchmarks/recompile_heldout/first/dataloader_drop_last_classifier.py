"""Image-like classifier trained for a few epochs with a shuffled DataLoader that drops the last partial batch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(150, 1, 8, 8)
labels = torch.randint(0, 5, (150,))
loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True, drop_last=True)

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 5)
)
model = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    for xb, yb in loader:
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
