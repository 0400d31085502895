"""The compile hoisted out of the loop: one compiled function, one graph."""

import torch


def scale(t, factor):
    return t * factor


compiled_scale = torch.compile(scale, backend="eager")
x = torch.ones(4)
for step in range(4):
    x = compiled_scale(x, torch.tensor(2.0))
