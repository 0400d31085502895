"""Nested data-dependent ifs."""
import torch


@torch.compile(backend="eager")
def route(x, y):
    h = x * y
    if h.mean() > 0:  # dynamo: break
        if h.max() > 10:  # dynamo: break
            h = h / 10
        else:
            h = h * 2
    else:
        h = -h
    return h.sin()


ENTRY = route
INPUTS = [
    (torch.tensor([4.0, 5.0]), torch.tensor([4.0, 1.0])),
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0])),
    (torch.tensor([-1.0, -2.0]), torch.tensor([1.0, 1.0])),
]
