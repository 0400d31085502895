"""An `if (` whose condition spans lines, a Python operand first: where does Dynamo break?"""
import torch


@torch.compile(backend="eager")
def gate(x, m):
    if (
        m is not None
        and x.sum() > 0  # dynamo: break
    ):
        return x * 2
    return x


ENTRY = gate
INPUTS = [
    (torch.ones(3), 1),
    (-torch.ones(3), 1),
]
