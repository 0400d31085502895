"""`import torch as th`: the same data-dependent branch under an alias."""
import torch as th


@th.compile(backend="eager")
def gate(x):
    if th.any(x < 0):  # dynamo: break
        x = th.abs(x)
    return th.sqrt(x)


ENTRY = gate
INPUTS = [
    (th.tensor([-4.0, 9.0]),),
    (th.tensor([4.0, 9.0]),),
]
