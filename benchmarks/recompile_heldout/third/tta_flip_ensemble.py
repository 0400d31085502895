"""Test-time augmentation for a CNN classifier: average softmax over identity, horizontal/vertical flips and a 180-degree rotation."""
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
)
net.eval()
predict = torch.compile(net, backend="eager")

AUGS = {
    "identity": lambda x: x,
    "hflip": lambda x: torch.flip(x, dims=[3]),
    "vflip": lambda x: torch.flip(x, dims=[2]),
    "rot180": lambda x: torch.rot90(x, 2, dims=[2, 3]),
}

images = torch.rand(40, 3, 32, 32)
labels = torch.randint(0, 10, (40,))
correct_single, correct_tta = 0, 0
with torch.no_grad():
    for i in range(0, 40, 10):
        batch = images[i:i + 10]
        probs = {name: predict(aug(batch)).softmax(-1) for name, aug in AUGS.items()}
        ensemble = torch.stack(list(probs.values())).mean(0)
        correct_single += (probs["identity"].argmax(-1) == labels[i:i + 10]).sum().item()
        correct_tta += (ensemble.argmax(-1) == labels[i:i + 10]).sum().item()
print(f"single-view acc {correct_single / 40:.3f}  TTA acc {correct_tta / 40:.3f}")
