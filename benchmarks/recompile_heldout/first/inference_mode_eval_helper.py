"""Periodic validation of a frozen feature extractor + linear probe using an inference_mode helper."""
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
probe = nn.Linear(8, 10)
features = torch.compile(backbone, backend="eager")
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
val_images, val_labels = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))


@torch.inference_mode()
def extract(images):
    return features(images)


@torch.no_grad()
def validate():
    return (probe(extract(val_images)).argmax(-1) == val_labels).float().mean().item()


for epoch in range(3):
    for _ in range(4):
        imgs, labels = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))
        feats = extract(imgs).clone()
        loss = nn.functional.cross_entropy(probe(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    validate()
