"""Segmentation training with a compiled wrapper while periodic validation runs the original eager module."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES = 3

model = nn.Sequential(
    nn.Conv2d(3, 24, 3, padding=1), nn.BatchNorm2d(24), nn.ReLU(), nn.Dropout2d(0.2),
    nn.Conv2d(24, 24, 3, padding=2, dilation=2), nn.BatchNorm2d(24), nn.ReLU(),
    nn.Conv2d(24, N_CLASSES, 1),
)
train_step_model = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
train_x, train_y = torch.rand(48, 3, 48, 48), torch.randint(0, N_CLASSES, (48, 48, 48))
val_x, val_y = torch.rand(10, 3, 48, 48), torch.randint(0, N_CLASSES, (10, 48, 48))


def pixel_accuracy(net, x, y):
    net.eval()
    with torch.no_grad():
        acc = (net(x).argmax(1) == y).float().mean().item()
    net.train()
    return acc


for epoch in range(3):
    perm = torch.randperm(48)
    for i in range(0, 48, 12):
        idx = perm[i:i + 12]
        loss = F.cross_entropy(train_step_model(train_x[idx]), train_y[idx], label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f} val_acc {pixel_accuracy(model, val_x, val_y):.3f}")
