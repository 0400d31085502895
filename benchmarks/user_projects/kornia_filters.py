"""Preprocessing with kornia's filters and colour conversions inside the model."""

import kornia
import torch
from torch import nn


class EdgeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, images):
        gray = kornia.color.rgb_to_grayscale(images)
        blurred = kornia.filters.gaussian_blur2d(gray, (5, 5), (1.5, 1.5))
        edges = kornia.filters.sobel(blurred)
        return self.head(edges)


model = torch.compile(EdgeNet())


def inputs():
    return [(torch.rand(2, 3, 16, 16),)]
