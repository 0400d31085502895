"""A module-level user function named `print` shadows the builtin and is inlined: no break."""
import torch


def print(*args, **kwargs):
    return None


@torch.compile(backend="eager")
def f(x):
    x = torch.relu(x)
    print("tensor:", x)
    return torch.sin(x)


ENTRY = f
INPUTS = [
    (torch.tensor([1.0, -1.0]),),
]
