"""transformers 4.49.0 models/big_bird/modeling_big_bird.py:1292: `if perm_block[i] not in
illegal_blocks:`, a NumPy element tested for membership in a Python list. Membership in a list or a
tuple compares the value with each item, so a tensor or NumPy value there is data: the branch
breaks (gb0170 for a tensor, gb0033 for a NumPy number, measured). A set or a dict hashes instead (a
tensor's hash is its identity), and a shape is a Python int: those trace."""
import numpy as np
import torch


class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        if x[0] in [1.0, 2.0]:  # dynamo: break
            x = x + 1
        return x


def blocks(x):
    perm_block = np.arange(4) * 2
    illegal_blocks = list(range(3))
    if perm_block[1] not in illegal_blocks:  # dynamo: break
        x = x + 1
    return x


def shapes(x):
    if x.shape[0] in (3, 4):
        x = x * 2
    return x


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()

    def forward(self, x):
        return shapes(blocks(self.gate(x)))


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(3),), (torch.full((3,), 2.0),)]
