"""A plain function compiled by a script of another module: `compiled = torch.compile(normalize)`
in a training script (the setting `module-forward-is-compiled` does not cover it)."""
import torch


def normalize(x):
    peak = x.abs().max()
    if peak > 1:  # dynamo: break
        x = x / peak
    return x


def unused(x):
    print("never compiled", x)
    return x
