"""A `print` in a function not reachable from the compiled one: no break."""
import torch


def debug_dump(x):
    print("activation:", x)


@torch.compile(backend="eager")
def forward(x):
    return torch.sigmoid(x) * 2


ENTRY = forward
INPUTS = [
    (torch.ones(2),),
]
