"""A data-dependent if in a plain eager function that ENTRY never calls: no break."""
import torch


def preprocess(x):
    if x.sum() > 0:
        return x / x.sum()
    return x.abs()


@torch.compile(backend="eager")
def model(x):
    return torch.tanh(x * 3)


ENTRY = model
INPUTS = [
    (preprocess(torch.tensor([1.0, 3.0])),),
    (preprocess(torch.tensor([-1.0, -3.0])),),
]
