"""MLP with dropout trained with a compiled model, validating at the end of every epoch."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 3))
cmodel = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
val_x, val_y = torch.randn(64, 12), torch.randint(0, 3, (64,))


def evaluate():
    model.eval()
    with torch.no_grad():
        acc = (cmodel(val_x).argmax(-1) == val_y).float().mean().item()
    model.train()
    return acc


for epoch in range(3):
    for _ in range(4):
        x, y = torch.randn(64, 12), torch.randint(0, 3, (64,))
        loss = nn.functional.cross_entropy(cmodel(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    evaluate()
