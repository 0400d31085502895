"""A step counter kept in a 0-d tensor buffer changed in place: its value is not guarded."""

import torch
from torch import nn


class Counted(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.register_buffer("steps", torch.tensor(0), persistent=False)

    def forward(self, x):
        self.steps += 1
        return self.linear(x) * self.steps


model = torch.compile(Counted(), backend="eager")
x = torch.randn(2, 4)
for step in range(8):
    model(x)
