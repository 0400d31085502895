"""An image classifier that augments its batch on the fly in training (kornia.augmentation)."""

import kornia.augmentation as K
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.augment = nn.Sequential(K.RandomHorizontalFlip(p=0.5), K.ColorJitter(0.2, 0.2, 0.2, 0.1, p=0.8))
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 10)

    def forward(self, images):
        if self.training:
            images = self.augment(images)
        feats = self.conv(images).mean((2, 3))
        return self.head(feats)


model = torch.compile(Classifier())


def inputs():
    return [(torch.rand(4, 3, 16, 16),)]
