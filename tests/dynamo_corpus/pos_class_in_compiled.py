"""A `class` statement inside a compiled function (gb8977)."""
import torch


@torch.compile(backend="eager")
def build(x):
    class Holder:  # dynamo: break
        scale = 2.0

    return x * Holder.scale


ENTRY = build
INPUTS = [(torch.arange(3.0),)]
