"""An evaluation helper decorated with `@torch.no_grad()` calls the compiled model the training
loop also calls with grad: one recompile, at the model's `forward`."""

import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):  # recompile: mode
        return self.fc(x)


model = torch.compile(Regressor(), backend="eager")


@torch.no_grad()
def evaluate(batch):
    return model(batch).mean()


def train_step(batch):
    loss = model(batch).pow(2).mean()
    loss.backward()


batch = torch.randn(4, 4)
for epoch in range(3):
    train_step(batch)
    evaluate(batch)
