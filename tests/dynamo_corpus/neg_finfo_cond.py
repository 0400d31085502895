"""`torch.finfo(x.dtype).max` in a condition is a constant: no break."""
import torch


def mask_value(scores):
    if torch.finfo(scores.dtype).max > 1e30:
        fill = -1e9
    else:
        fill = -1e4
    return scores.masked_fill(scores < 0, fill)


@torch.compile(backend="eager")
def f(s32, s16):
    return mask_value(s32).sum() + mask_value(s16).float().sum()


ENTRY = f
INPUTS = [
    (torch.tensor([1.0, -1.0]), torch.tensor([1.0, -1.0], dtype=torch.float16)),
]
