"""`from warnings import warn` then a bare `warn(...)` call."""
from warnings import warn

import torch


@torch.compile(backend="eager")
def pad_to(x, n: int):
    if x.shape[0] < n:
        warn("input is shorter than the window; padding")  # dynamo: break
        x = torch.cat([x, x.new_zeros(n - x.shape[0])])
    return x.cumsum(0)


ENTRY = pad_to
INPUTS = [
    (torch.ones(2), 4),
    (torch.ones(4), 4),
]
