"""A compiled function trained with grad, then evaluated under `torch.no_grad()`: the grad mode is
part of the guards, one recompile, then both graphs are reused."""

import torch


@torch.compile(backend="eager")
def predict(x, weight):  # recompile: mode
    return torch.tanh(x @ weight)


weight = torch.randn(4, 4, requires_grad=True)
x = torch.randn(2, 4)
for epoch in range(3):
    predict(x, weight).sum().backward()
    with torch.no_grad():
        predict(x, weight)
