"""A Timer context manager measures how long a block takes; a compiled layer times its
matmul by opening a fresh Timer around it."""
import time

import torch


class Timer:
    def __init__(self, name):
        self.name = name
        self.start = 0.0
        self.elapsed = 0.0

    def __enter__(self):
        self.start = time.perf_counter()  # predicted: break
        return self

    def __exit__(self, exc_type, exc, tb):
        self.elapsed = time.perf_counter() - self.start  # predicted: break
        return False


@torch.compile(backend="eager")
def timed_layer(x, w):
    with Timer("matmul") as t:
        y = torch.relu(x @ w)
    return y.sum(), t.name


ENTRY = timed_layer
INPUTS = [
    (torch.arange(4.0), torch.ones(4, 4)),
    (-torch.ones(3), torch.eye(3)),
]
