"""A conditional expression: `a if x.std() > 1 else b`."""
import torch


@torch.compile(backend="eager")
def pick_scale(x, a, b):
    scale = a if x.std() > 1 else b  # dynamo: break
    return x * scale


ENTRY = pick_scale
INPUTS = [
    (torch.tensor([0.0, 10.0, -10.0]), torch.tensor(0.1), torch.tensor(1.0)),
    (torch.tensor([0.0, 0.1, -0.1]), torch.tensor(0.1), torch.tensor(1.0)),
]
