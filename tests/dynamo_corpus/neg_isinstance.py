"""`isinstance(x, torch.Tensor)` is decided at trace time: no break."""
import torch


def add_bias(x, bias):
    if isinstance(bias, torch.Tensor):
        return x + bias.to(x.dtype)
    return x + float(bias)


@torch.compile(backend="eager")
def f(x, b):
    return add_bias(x, b) * add_bias(x, 0.5)


ENTRY = f
INPUTS = [
    (torch.ones(2), torch.tensor([1, 2])),
]
