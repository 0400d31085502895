"""Computes a normalised running sum over the first n samples of a signal; the window
length reaches one compiled helper as a 0-d tensor and another as a Python int."""
import torch


@torch.compile(backend="eager")
def window(x, n):
    scale = x.abs().max() + 1
    if n > 1:  # predicted: break
        return x[:n].cumsum(0) / scale  # predicted: break
    return x * n / scale


@torch.compile(backend="eager")
def head(x, k):
    return x[:k] * 2


def run(x, n):
    length = torch.tensor(n)
    return window(x, length), head(x, n)


ENTRY = run
INPUTS = [
    (torch.arange(4.0), 3),
    (torch.ones(3), 1),
]
