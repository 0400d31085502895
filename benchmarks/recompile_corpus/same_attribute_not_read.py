"""An attribute assigned on the compiled module in the loop that `forward` never reads."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.last_epoch = 0

    def forward(self, x):
        return self.fc(x)


model = Net()
compiled = torch.compile(model, backend="eager")
x = torch.randn(2, 4)
for epoch in range(6):
    model.last_epoch = epoch
    compiled(x)
