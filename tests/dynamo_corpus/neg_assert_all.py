"""`assert (b > 0).all()` becomes an async assert: no break."""
import torch


@torch.compile(backend="eager")
def divide(a, b):
    assert (b > 0).all(), "denominator must be positive"
    return a / b


ENTRY = divide
INPUTS = [
    (torch.ones(3), torch.full((3,), 2.0)),
]
