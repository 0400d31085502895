"""A torch module rebuilt and compiled at every step with a new hyperparameter: the guard on its
attribute (`fn.negative_slope == 0.1`) is made in torch's own `forward`, and the recompile belongs
at the user's line that rebuilds it."""

import torch
from torch import nn

x = torch.ones(2, 4)
for slope in (0.1, 0.2, 0.3):
    torch.compile(nn.LeakyReLU(slope), backend="eager")(x)  # recompile
