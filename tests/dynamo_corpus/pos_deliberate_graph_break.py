"""Deliberate splits left in the code: `torch._dynamo.graph_break()` and `torch._dynamo.step_unsupported()`."""
import torch


@torch.compile(backend="eager")
def two_halves(x):
    y = torch.sin(x)
    torch._dynamo.graph_break()  # dynamo: break
    return torch.cos(y)


@torch.compile(backend="eager")
def rest_eager(x):
    y = torch.sin(x) + 1
    z = y * 2
    torch._dynamo.step_unsupported()  # dynamo: break
    return torch.cos(z)


def run(x):
    return two_halves(x) + rest_eager(x)


ENTRY = run
INPUTS = [(torch.arange(1.0, 4.0),)]
