"""A Python number passed to a compiled function, the same at every call: nothing to recompile."""

import torch


@torch.compile(backend="eager")
def smooth(x, alpha):
    return alpha * x + (1 - alpha) * x.mean()


x = torch.randn(4)
alpha = 0.9
for step in range(6):
    x = smooth(x, alpha)
