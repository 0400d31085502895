"""`len()` of a growing list passed to a compiled function: the int changes at every call."""

import torch


def normalise(x, count):
    return x / count  # recompile: number


compiled_normalise = torch.compile(normalise, backend="eager")
history = []
x = torch.ones(4)
for step in range(5):
    history.append(step)
    compiled_normalise(x, len(history))
