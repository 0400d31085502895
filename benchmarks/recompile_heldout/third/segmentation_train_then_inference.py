"""Tiny encoder-decoder segmentation net trained on random masks, then evaluated for mIoU under torch.inference_mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES = 4


class TinySegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Dropout2d(0.1))
        self.up = nn.Sequential(nn.ConvTranspose2d(32, 16, 2, stride=2), nn.ReLU(), nn.Conv2d(16, N_CLASSES, 1))

    def forward(self, x):
        return self.up(self.down(x))


def miou(pred, target):
    ious = []
    for c in range(N_CLASSES):
        inter = ((pred == c) & (target == c)).sum().item()
        union = ((pred == c) | (target == c)).sum().item()
        if union:
            ious.append(inter / union)
    return sum(ious) / len(ious)


model = TinySegNet()
model = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
images, masks = torch.rand(32, 3, 64, 64), torch.randint(0, N_CLASSES, (32, 64, 64))

for epoch in range(2):
    model.train()
    for i in range(0, 32, 8):
        loss = F.cross_entropy(model(images[i:i + 8]), masks[i:i + 8])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.inference_mode():
        preds = torch.cat([model(images[i:i + 8]).argmax(1) for i in range(0, 32, 8)])
    print(f"epoch {epoch} loss {loss.item():.3f} mIoU {miou(preds, masks):.3f}")
