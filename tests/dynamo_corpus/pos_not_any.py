"""Negated reduction: `if not x.any():`."""
import torch


@torch.compile(backend="eager")
def masked_mean(x, mask):
    if not mask.any():  # dynamo: break
        return x.mean()
    return (x * mask).sum() / mask.sum()


ENTRY = masked_mean
INPUTS = [
    (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, 0.0, 0.0])),
    (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 0.0, 1.0])),
]
