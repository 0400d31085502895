"""Lambdas kept in a list and picked by a tensor index, as kornia's ColorJitter applies its
transforms in a random order: the conditional expression in a lambda breaks where it is written,
and indexing the list with a tensor reads the tensor's value (`__index__`)."""
import torch


@torch.compile(backend="eager")
def apply_in_order(img, factors, order: torch.Tensor):
    transforms = [
        lambda x: x * factors[0] if (factors[0] != 1).any() else x,  # dynamo: break
        lambda x: x + factors[1],
    ]
    out = img
    for idx in order:
        t = transforms[idx]  # dynamo: break
        out = t(out)
    return out


ENTRY = apply_in_order
INPUTS = [
    (torch.ones(3), torch.tensor([2.0, 1.0]), torch.tensor([1, 0])),
    (torch.ones(3), torch.tensor([1.0, 1.0]), torch.tensor([0, 1])),
]
