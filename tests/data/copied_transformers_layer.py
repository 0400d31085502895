"""A transformers 5.x layer copied out of its package, as a new user would try it (issue 18)."""

import torch
from torch import nn

from ...modeling_layers import GradientCheckpointingLayer
from ...utils import is_torchdynamo_compiling


class FooLayer(GradientCheckpointingLayer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        if not torch.isfinite(h).all():  # the break: flagged although the base is not in sight
            h = torch.zeros_like(h)
        if not is_torchdynamo_compiling() and x.sum() > 0:  # never taken under compile: not flagged
            print("positive")
        return h
