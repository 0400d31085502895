"""`flag and x.sum() > 10` with a Python bool parameter `flag`."""
import torch


@torch.compile(backend="eager")
def maybe_damp(x, flag: bool):
    h = x + 1
    if flag and h.sum() > 10:  # dynamo: break
        h = h * 0.5
    return h.exp()


ENTRY = maybe_damp
INPUTS = [
    (torch.full((4,), 5.0), True),
    (torch.zeros(4), True),
    (torch.full((4,), 5.0), False),
]
