"""A shape-based condition `x.shape[0] > 2` is resolved at trace time: no break."""
import torch


def pool(x):
    if x.shape[0] > 2:
        return x[:2].sum(0)
    else:
        return x.sum(0)


@torch.compile(backend="eager")
def f(long_seq, short_seq):
    return pool(long_seq) + pool(short_seq)


ENTRY = f
INPUTS = [
    (torch.ones(4, 3), torch.ones(2, 3)),
    (-torch.ones(4, 3), torch.ones(2, 3)),
]
