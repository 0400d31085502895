"""A logarithm guarded by a test of its input (the kind of guard a loss writes before `log`): the
rewrite runs `torch.log` on every call, so where the guard excluded the input it must see a value
in its domain, or `torch.where`'s backward gives NaN gradients (0 × inf)."""
import torch


@torch.compile(backend="eager")
def entropy_term(p: torch.Tensor, scale: torch.Tensor):
    total = p.sum()
    if total > 0:  # dynamo: break
        q = p / total
        h = -(q * torch.log(q + 1e-12)).sum() * scale
    else:
        h = scale * 0.0
    return h


ENTRY = entropy_term
INPUTS = [
    (torch.tensor([0.2, 0.3, 0.5]), torch.tensor(2.0)),
    (torch.tensor([0.0, 0.0, 0.0]), torch.tensor(2.0)),
]
