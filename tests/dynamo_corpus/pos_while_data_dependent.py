"""A data-dependent `while z.sum() < x.sum():` loop."""
import torch


@torch.compile(backend="eager")
def grow(x):
    z = torch.ones_like(x)
    while z.sum() < x.sum():  # dynamo: break
        z = z * 2
    return z


ENTRY = grow
INPUTS = [
    (torch.full((2,), 5.0),),
    (torch.zeros(2),),
]
