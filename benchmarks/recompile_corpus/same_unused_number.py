"""A changing Python int passed to a compiled function that only uses it for a tensor's value it
does not read: Dynamo does not guard an argument the traced code never reads."""

import torch


@torch.compile(backend="eager")
def forward_step(x, step):
    return x.relu()


x = torch.randn(4)
for step in range(6):
    forward_step(x, step)
