"""transformers 4.49.0 vits/modeling_vits.py:313: `if not (discriminant >= 0).all(): raise` (GM304;
its check must assert `(discriminant >= 0).all()` itself: `torch.logical_not(not ...)` raised a
TypeError on every call)."""
import torch


@torch.compile(backend="eager")
def roots(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    discriminant = b.pow(2) - 4 * a * c
    if not (discriminant >= 0).all():  # dynamo: break
        raise RuntimeError(f"invalid discriminant {discriminant}")
    return (2 * c) / (-b - torch.sqrt(discriminant))


ENTRY = roots
INPUTS = [(torch.tensor([1.0, 2.0]), torch.tensor([5.0, 6.0]), torch.tensor([1.0, 1.0]))]
