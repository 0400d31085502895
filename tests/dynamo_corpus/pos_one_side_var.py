"""A variable (`residual`) defined only on one side of a data-dependent if."""
import torch


@torch.compile(backend="eager")
def block(x):
    h = torch.tanh(x)
    if h.sum() > 0:  # dynamo: break
        residual = h * 0.5
        h = h + residual
    return h * 3


ENTRY = block
INPUTS = [
    (torch.tensor([1.0, 2.0]),),
    (torch.tensor([-1.0, -2.0]),),
]
