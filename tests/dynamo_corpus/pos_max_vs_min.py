"""Compare two reductions: `if x.max() > a.min()`."""
import torch


@torch.compile(backend="eager")
def overlap(x, a):
    if x.max() > a.min():  # dynamo: break
        return torch.cat([x, a]).sort().values
    else:
        return torch.cat([x, a])


ENTRY = overlap
INPUTS = [
    (torch.tensor([1.0, 5.0]), torch.tensor([2.0, 3.0])),
    (torch.tensor([1.0, 1.5]), torch.tensor([2.0, 3.0])),
]
