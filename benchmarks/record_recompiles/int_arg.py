"""A Python int that changes between calls of a compiled function: Dynamo specialises on the first
value where the int is used (the guard `factor == 1`) and recompiles once for the second, after
which the int is dynamic. The call passing the int is not in torch's records (a function compiled
with a decorator starts its compile with no stack above it), so the event is at the use."""

import torch


@torch.compile(backend="eager")
def scale(x, factor):
    return x * factor  # recompile


x = torch.ones(4)
for factor in range(1, 5):
    scale(x, factor)
