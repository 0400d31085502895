"""A loop bounded by a static size `for i in range(x.size(0))` is unrolled: no break."""
import torch


@torch.compile(backend="eager")
def weighted_rows(x, w):
    out = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        out = out + x[i] * w[i]
    return out


ENTRY = weighted_rows
INPUTS = [
    (torch.ones(3, 2), torch.tensor([1.0, 2.0, 3.0])),
]
