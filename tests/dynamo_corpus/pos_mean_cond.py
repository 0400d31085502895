"""Condition on `.mean()` of an activation."""
import torch


@torch.compile(backend="eager")
def center(x):
    if x.mean() > 0.5:  # dynamo: break
        x = x - x.mean()
    else:
        x = x + 0.5
    return x.square()


ENTRY = center
INPUTS = [
    (torch.tensor([1.0, 2.0]),),
    (torch.tensor([0.0, 0.1]),),
]
