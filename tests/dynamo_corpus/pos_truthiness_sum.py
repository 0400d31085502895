"""Implicit truthiness of a tensor: `if x.sum():`."""
import torch


@torch.compile(backend="eager")
def normalize(x):
    total = x.sum()
    if total:  # dynamo: break
        x = x / total
    else:
        x = torch.full_like(x, 1.0 / x.numel())
    return x


ENTRY = normalize
INPUTS = [
    (torch.tensor([1.0, 3.0]),),
    (torch.tensor([0.0, 0.0]),),
]
