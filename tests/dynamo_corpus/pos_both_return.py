"""Both branches of a data-dependent if return."""
import torch


@torch.compile(backend="eager")
def activation(x):
    h = x * 3
    if h.sum() > 0:  # dynamo: break
        return torch.relu(h)
    else:
        return torch.sigmoid(h)


ENTRY = activation
INPUTS = [
    (torch.tensor([1.0, 2.0]),),
    (torch.tensor([-1.0, -2.0]),),
]
