"""Branch on the tensor method `(x > 0).all()`."""
import torch


@torch.compile(backend="eager")
def safe_log(x):
    if (x > 0).all():  # dynamo: break
        out = torch.log(x)
    else:
        out = torch.log(x.abs() + 1e-6)
    return out.sum()


ENTRY = safe_log
INPUTS = [
    (torch.tensor([1.0, 2.0, 3.0]),),
    (torch.tensor([1.0, -2.0, 3.0]),),
]
