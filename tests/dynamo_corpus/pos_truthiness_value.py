"""A tensor's truth value taken outside any `if`: `not mask.any()` as a flag, and `and` between
tensors: Python asks `bool()` of the tensor. Measured on torch 2.13.0, Dynamo words the two
differently: `not t` reads the element ("Data dependent operator"), `t and u` jumps on it
("Data-dependent branching"); each skips the rest of its frame, hence one helper each."""
import torch


def is_empty(mask):
    return not mask.any()  # dynamo: break


def both_set(x, mask):
    return (x > 0).any() and mask.all()  # dynamo: break


@torch.compile(backend="eager")
def padding_flags(x, mask):
    return x + 1, is_empty(mask), both_set(x, mask)


ENTRY = padding_flags
INPUTS = [(torch.ones(3), torch.tensor([True, False, True])), (-torch.ones(3), torch.tensor([False, False, False]))]
