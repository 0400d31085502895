"""Inputs cast to double for a precise evaluation pass, float otherwise: one recompile for the dtype."""

import torch


@torch.compile(backend="eager")
def energy(x):  # recompile: mode
    return (x**2).sum(dim=-1)


x = torch.randn(3, 4)
for step in range(3):
    energy(x)
    energy(x.double())
