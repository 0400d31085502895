"""Conditions on Python bool/int/str parameters are static: no break."""
import torch


def act(x, kind: str, repeats: int, residual: bool):
    if kind == "gelu":
        h = torch.nn.functional.gelu(x)
    elif kind == "silu":
        h = torch.nn.functional.silu(x)
    else:
        h = x.relu()
    if repeats > 1:
        h = h * repeats
    return h + x if residual else h


@torch.compile(backend="eager")
def f(x):
    return act(x, "gelu", 2, True) + act(x, "silu", 1, False) + act(x, "relu", 1, False)


ENTRY = f
INPUTS = [
    (torch.ones(3),),
]
