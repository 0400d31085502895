"""A metrics helper kept out of compilation in a module of its own, the workaround users reach for
(`@torch.compiler.disable` on whatever breaks), called from a model's `forward` in another module."""
import torch


@torch.compiler.disable
def log_stats(h):
    print("mean activation", h.mean().item())  # not traced: no break of its own
    return h.std()


def scale(h):
    return h * 2
