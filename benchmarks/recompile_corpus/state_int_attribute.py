"""An int attribute of a compiled module assigned in the training loop (the epoch): a module's int
attribute is static, so every new value recompiles, up to the recompile limit."""

import torch
from torch import nn


class Curriculum(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.epoch = 0

    def forward(self, x):
        return self.linear(x) * (1 + self.epoch)  # recompile: state


model = Curriculum()
compiled = torch.compile(model, backend="eager")
x = torch.randn(2, 4)
for epoch in range(10):
    model.epoch = epoch
    compiled(x).sum().backward()
