"""A conditional expression whose two sides are plain numbers, on a tensor test (a new user's
case): `torch.where` on scalars gives a 0-d tensor that scales the same way."""
import torch


@torch.compile(backend="eager")
def scale(x: torch.Tensor):
    factor = 2.0 if x.mean() > 0 else 0.5  # dynamo: break
    return x * factor


ENTRY = scale
INPUTS = [(torch.ones(3),), (-torch.ones(3),)]
