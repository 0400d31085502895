"""A module rebuilt and compiled per hyperparameter: the guard on its attribute is made in torch's
own `forward`, and the recompile belongs at the line that rebuilds and calls it."""

import torch
from torch import nn

x = torch.randn(2, 4)
for slope in (0.01, 0.1, 0.2):
    activation = torch.compile(nn.LeakyReLU(slope), backend="eager")
    activation(x)  # recompile: compile
