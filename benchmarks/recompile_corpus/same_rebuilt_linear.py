"""A module of the same structure rebuilt and compiled at every step: its parameters are graph
inputs, every instance reuses the first compile."""

import torch
from torch import nn

x = torch.randn(2, 4)
for seed in range(4):
    torch.manual_seed(seed)
    layer = torch.compile(nn.Linear(4, 4), backend="eager")
    layer(x)
