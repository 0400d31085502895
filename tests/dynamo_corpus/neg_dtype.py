"""A dtype check `x.dtype == torch.float32` is static: no break."""
import torch


def to_float(t):
    if t.dtype == torch.float32:
        return t
    else:
        return t.float()


@torch.compile(backend="eager")
def f(x, ids):
    return to_float(x) + to_float(ids)


ENTRY = f
INPUTS = [
    (torch.ones(3), torch.arange(3)),
]
