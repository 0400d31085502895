"""A flag toggled on a compiled module between calls: one recompile for the other value; both
graphs are cached after that."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.use_residual = True

    def forward(self, x):
        y = self.linear(x)
        if self.use_residual:  # recompile: state
            y = y + x
        return y


block = torch.compile(Block(), backend="eager")
x = torch.randn(2, 4)
for step in range(6):
    block.use_residual = step % 2 == 0
    block(x)
