"""Builds position ramps for a sequence and mixes them with the input; one compiled helper
gets the ramp length as a tensor, the other as a Python int."""
import torch


@torch.compile(backend="eager")
def position_bias(x, n):
    pos = torch.arange(n, dtype=x.dtype)  # predicted: break
    return x.sum() * 0.5 + pos.mean()


@torch.compile(backend="eager")
def position_ramp(x, n):
    pos = torch.arange(n, dtype=x.dtype)
    if n > 1:
        pos = pos / (n - 1)
    return x.sum() * 0.5 + pos.mean()


def run(x, n):
    length = torch.tensor(n)
    return position_bias(x, length), position_ramp(x, n)


ENTRY = run
INPUTS = [
    (torch.ones(3), 4),
    (torch.arange(4.0), 1),
]
