"""`warnings.warn("...", UserWarning)` inside a compiled function."""
import warnings

import torch


@torch.compile(backend="eager")
def legacy_scale(x):
    warnings.warn("legacy_scale is deprecated", UserWarning)  # dynamo: break
    return x * 0.5


ENTRY = legacy_scale
INPUTS = [
    (torch.ones(3),),
]
