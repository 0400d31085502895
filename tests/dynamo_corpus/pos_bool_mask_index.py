"""Boolean-mask indexing `x[x > 0]` (dynamic output shape)."""
import torch


@torch.compile(backend="eager")
def positive_mean(x):
    h = x - 0.5
    pos = h[h > 0]  # dynamo: break
    return pos.mean()


ENTRY = positive_mean
INPUTS = [
    (torch.tensor([1.0, 0.0, 2.0]),),
]
