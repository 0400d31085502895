"""A sampling temperature annealed on a compiled module's attribute (a float): the attribute is
guarded, one recompile for the second value, then Dynamo treats the float as dynamic."""

import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.temperature = 1.0

    def forward(self, x):
        return torch.softmax(self.proj(x) / self.temperature, dim=-1)  # recompile: state


sampler = Sampler()
compiled = torch.compile(sampler, backend="eager")
x = torch.randn(2, 8)
for epoch in range(5):
    sampler.temperature = 1.0 - 0.1 * epoch
    compiled(x)
