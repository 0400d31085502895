"""`print` with `sep=` and `end=` keyword arguments."""
import torch


@torch.compile(backend="eager")
def trace_shapes(x):
    h = x.cumsum(0)
    print("h", h, sep=" | ", end="\n\n")  # dynamo: break
    return h.flip(0)


ENTRY = trace_shapes
INPUTS = [
    (torch.arange(4.0),),
]
