"""`torch.equal(a, b)`: a data-dependent op whose result is a Python bool (gb0033)."""
import torch


@torch.compile(backend="eager")
def maybe_skip(x, reference):
    y = x * 2
    if torch.equal(y, reference):  # dynamo: break
        return y
    return y + reference


ENTRY = maybe_skip
INPUTS = [(torch.ones(3), torch.full((3,), 2.0)), (torch.ones(3), torch.zeros(3))]
