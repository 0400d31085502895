import torch

from . import stats


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    stats.report(y)
    return y + 1


ENTRY = step
INPUTS = [(torch.ones(3),)]
