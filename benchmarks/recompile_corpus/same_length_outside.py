"""A growing list whose length is only logged outside the compiled function."""

import torch


@torch.compile(backend="eager")
def step(x):
    return (x * 2).sum()


losses = []
x = torch.randn(4)
for i in range(5):
    losses.append(step(x))
    count = len(losses)
