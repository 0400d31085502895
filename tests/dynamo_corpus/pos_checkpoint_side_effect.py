"""Side effects on outer Python objects inside functions run under `torch.utils.checkpoint` (gb0067):
a module-level list appended to, a dict written by subscript (through `functools.partial`); not a
list the function's own helper builds, nor `torch.add` (an out-of-place op)."""
import functools

import torch
import torch.utils.checkpoint

seen = []
cache = {}


def block(x):
    seen.append(x.shape[0])  # dynamo: break
    return torch.relu(x) * 2


def scaled(x, scale):
    cache["scale"] = scale  # dynamo: break
    return x * scale


def pure(x):
    def parts_of(t):
        parts = []
        parts.append(t.sin())
        return parts

    return torch.add(parts_of(x)[0], 1)


@torch.compile(backend="eager")
def forward(x):
    a = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    b = torch.utils.checkpoint.checkpoint(functools.partial(scaled, scale=2.0), x, use_reentrant=False)
    return a + b + torch.utils.checkpoint.checkpoint(pure, x, use_reentrant=False)


ENTRY = forward
INPUTS = [(torch.arange(3.0, requires_grad=True),)]
