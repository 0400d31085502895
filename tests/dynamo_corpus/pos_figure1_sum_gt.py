"""Paper Figure 1: if/else on a data-dependent condition `x.sum() > 10`."""
import torch


@torch.compile(backend="eager")
def f(x, y):
    x_1 = x * 2
    y_1 = y * 2
    if x.sum() > 10:  # dynamo: break
        z = x_1 + y_1
    else:
        z = x_1 * y_1
    return torch.relu(z)


ENTRY = f
INPUTS = [
    (torch.full((8,), 2.0), torch.ones(8)),
    (torch.ones(8), torch.ones(8)),
]
