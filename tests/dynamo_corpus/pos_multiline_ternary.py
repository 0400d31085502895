"""Conditional expressions written over several lines, as kornia's ColorJitter writes its lambdas:
Dynamo names the line where the expression starts when the test is a call (`.any()`), and the
comparison's own line when the test is a comparison."""
import torch


@torch.compile(backend="eager")
def jitter(x, factor):
    brightened = (
        x + factor  # dynamo: break
        if (factor != 0).any()
        else x
    )
    scaled = (
        brightened * 2
        if brightened.sum() > 0  # dynamo: break
        else brightened
    )
    return scaled


ENTRY = jitter
INPUTS = [
    (torch.ones(3), torch.zeros(1)),
    (-torch.ones(3), torch.ones(1)),
]
