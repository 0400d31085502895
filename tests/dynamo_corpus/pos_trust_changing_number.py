"""Issue 42, class 12: a print of a Python int that changes between calls; in the graph, Dynamo would guard on it."""
import torch


@torch.compile(backend="eager")
def f(x, step):
    y = x * 2
    print(f"step {step}: {y.sum()}")  # dynamo: break
    return y + 1


ENTRY = f
INPUTS = [(torch.ones(3), step) for step in range(12)]
