"""Issue 42, class 1: the discarded branch overflows to inf; torch.where's backward makes 0 * inf = NaN."""
import torch


@torch.compile(backend="eager")
def f(x):
    if x.abs().max() < 1e10:  # dynamo: break
        y = x * x * x
    else:
        y = x
    return y


ENTRY = f
INPUTS = [(torch.full((3,), 2.0),), (torch.full((3,), 1e20),)]
