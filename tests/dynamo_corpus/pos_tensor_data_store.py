"""`.data` replaced on a tensor the compiled function made itself (Dynamo supports it only for
tensors created outside the compiled region)."""
import torch


@torch.compile(backend="eager")
def rescale(x):
    y = x * 2
    y.data = x * 3  # dynamo: break
    return y + 1


ENTRY = rescale
INPUTS = [
    (torch.ones(3),),
]
