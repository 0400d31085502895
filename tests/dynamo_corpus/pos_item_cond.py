"""`.item()` in a condition (not fixable with torch.where)."""
import torch


@torch.compile(backend="eager")
def first_sign(x):
    h = x * 2
    if h[0].item() > 0:  # dynamo: break
        return h + 1
    return h - 1


ENTRY = first_sign
INPUTS = [
    (torch.tensor([1.0, 2.0]),),
    (torch.tensor([-1.0, 2.0]),),
]
