"""A file opened inside compiled code (debug dumps in research code)."""
import torch


@torch.compile(backend="eager")
def dump(x):
    y = x * 2
    open("/dev/null").close()  # dynamo: break
    return y + 1


ENTRY = dump
INPUTS = [
    (torch.ones(3),),
]
