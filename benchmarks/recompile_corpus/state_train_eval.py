"""Train, then evaluate the same compiled module with `.eval()` (no `no_grad`): the `training` flag
is guarded, one recompile for eval mode; the next epoch's training reuses the first graph."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.linear(x))  # recompile: state


net = torch.compile(Net(), backend="eager")
x = torch.randn(2, 4)
for epoch in range(3):
    net.train()
    net(x).sum().backward()
    net.eval()
    net(x)
