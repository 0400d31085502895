"""The same compiled model run in float32 and under CPU autocast (bfloat16)."""

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):  # recompile: mode
        return self.fc(x).relu()


model = torch.compile(Mlp(), backend="eager")
x = torch.randn(2, 8)
for step in range(3):
    model(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model(x)
