"""Multi-scale training of a small CNN classifier with random-resized crops drawn at a few output resolutions."""
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
SCALES = [64, 96, 128]


def random_resized_crop(img, size, scale=(0.3, 1.0)):
    _, H, W = img.shape
    area = H * W * random.uniform(*scale)
    side = max(8, min(H, W, int(area ** 0.5)))
    top, left = random.randint(0, H - side), random.randint(0, W - side)
    crop = img[:, top:top + side, left:left + side]
    return F.interpolate(crop[None], size=(size, size), mode="bilinear", align_corners=False)[0]


net = nn.Sequential(
    nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
    nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
)
net = torch.compile(net, backend="eager")
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
images = torch.rand(64, 3, 160, 160)
labels = torch.randint(0, 10, (64,))

for step in range(12):
    size = random.choice(SCALES)  # one resolution per batch
    idx = torch.randint(0, 64, (16,))
    batch = torch.stack([random_resized_crop(images[i], size) for i in idx])
    loss = F.cross_entropy(net(batch), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} res {size} loss {loss.item():.3f}")
