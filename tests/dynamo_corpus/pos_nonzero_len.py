"""`torch.nonzero(...)` followed by `len(...)` (dynamic output shape)."""
import torch


@torch.compile(backend="eager")
def count_active(x):
    idx = torch.nonzero(x > 0)  # dynamo: break
    n = len(idx)
    return x.sum() / max(n, 1)


ENTRY = count_active
INPUTS = [
    (torch.tensor([1.0, -1.0, 2.0]),),
]
