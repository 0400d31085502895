"""Branch on `torch.any(x > 0)`: a data-dependent condition."""
import torch


@torch.compile(backend="eager")
def rectify(x, bias):
    h = x + bias
    if torch.any(h > 0):  # dynamo: break
        h = torch.relu(h)
    else:
        h = torch.zeros_like(h)
    return h * 2


ENTRY = rectify
INPUTS = [
    (torch.tensor([1.0, -2.0, 3.0]), torch.zeros(3)),
    (torch.tensor([-1.0, -2.0, -3.0]), torch.zeros(3)),
]
