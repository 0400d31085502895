"""Gradient-clipping style condition on `.norm()`."""
import torch


@torch.compile(backend="eager")
def clip_grad(g, max_norm):
    total = g.norm()
    if total > max_norm:  # dynamo: break
        g = g * (max_norm / total)
    return g


ENTRY = clip_grad
INPUTS = [
    (torch.tensor([3.0, 4.0]), torch.tensor(1.0)),
    (torch.tensor([0.3, 0.4]), torch.tensor(1.0)),
]
