"""A module flag set once before the loop, never changed between calls: one graph."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.use_residual = True

    def forward(self, x):
        y = self.linear(x)
        if self.use_residual:
            y = y + x
        return y


block = torch.compile(Block(), backend="eager")
block.use_residual = False
x = torch.randn(2, 4)
for step in range(6):
    block(x)
