"""A function compiled through an alias, in both spellings: `fn = f_info; torch.compile(backend=...)(fn)`
and `torch.compile(alias, backend=...)`."""
import torch


def f_info(x):
    print("f_info", x.sum())  # dynamo: break
    return x + 1


def f_scale(x):
    peak = x.max().item()  # dynamo: break
    return x / peak


fn = f_info
compiled_info = torch.compile(backend="eager")(fn)
scale_alias = f_scale
compiled_scale = torch.compile(scale_alias, backend="eager")


def run(x):
    return compiled_info(x) + compiled_scale(x)


ENTRY = run
INPUTS = [(torch.arange(1.0, 4.0),)]
