"""A module-level constant read inside compiled code, never reassigned: one guard, never failed."""

import torch

EPSILON = 1e-5


@torch.compile(backend="eager")
def normalise(x):
    return x / (x.norm() + EPSILON)


for step in range(6):
    normalise(torch.randn(4))
