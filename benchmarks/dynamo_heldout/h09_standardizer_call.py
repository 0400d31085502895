"""A NormStats dataclass derives an inverse std in __post_init__ and a callable Standardizer
applies it; both are built inside a compiled normalisation function."""
import dataclasses

import torch


@dataclasses.dataclass
class NormStats:
    mean: torch.Tensor
    std: torch.Tensor
    eps: float = 1e-5

    def __post_init__(self):
        self.inv_std = 1.0 / (self.std + self.eps)


class Standardizer:
    def __init__(self, stats, clip):
        self.stats = stats
        self.clip = clip

    def __call__(self, x):
        z = (x - self.stats.mean) * self.stats.inv_std
        return z.clamp(-self.clip, self.clip)


@torch.compile(backend="eager")
def normalize(x):
    stats = NormStats(mean=x.mean(), std=x.std())
    standardize = Standardizer(stats, clip=3.0)
    return standardize(x)


ENTRY = normalize
INPUTS = [
    (torch.arange(4.0),),
    (-torch.ones(3),),
]
