"""A data-dependent `if` inside a `for i in range(n)` loop of a plain function."""
import torch


@torch.compile(backend="eager")
def power_iter(h, w):
    for i in range(3):
        h = h @ w
        if h.abs().max() > 4.0:  # dynamo: break
            h = h / 2
    return h


ENTRY = power_iter
INPUTS = [
    (torch.ones(1, 2), 2 * torch.eye(2)),
]
