"""A boolean-mask store `x[mask] = 0` (index_put) keeps a static shape: no break."""
import torch


@torch.compile(backend="eager")
def zero_negatives(x):
    x = x.clone()
    mask = x < 0
    x[mask] = 0
    return x * 2


ENTRY = zero_negatives
INPUTS = [
    (torch.tensor([1.0, -2.0, 3.0]),),
]
