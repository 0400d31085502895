"""A `raise` every traced call of the compiled function reaches, with no handler in it: Dynamo
observes the exception and breaks there (gb0088); one under a Python condition that is false when
traced, or caught in the function, does not break (issue 56)."""
import torch


@torch.compile(backend="eager")
def step(x):
    y = torch.relu(x)
    if x.shape[0] > 100:
        raise ValueError("too long")
    try:
        raise KeyError("handled")
    except KeyError:
        y = y + 1
    raise RuntimeError("always")  # dynamo: break


def run(x):
    try:
        return step(x)
    except RuntimeError:
        return x


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
