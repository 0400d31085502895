"""A module rebuilt and compiled at every step with the same structure (`nn.Linear(4, 4)`): no
recompile, since the compiled code is guarded on the module's type and shapes and its parameters are
inputs of the graph, so every new instance reuses the first compile."""

import torch
from torch import nn

x = torch.ones(2, 4)
for _ in range(4):
    torch.compile(nn.Linear(4, 4), backend="eager")(x)
