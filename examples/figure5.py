"""The GraphMend paper's Figure 5: a print inside a compiled function."""

import torch


@torch.compile
def fn(x):
    x = torch.relu(x)
    print("tensor:", x)  # graph break: a Python side effect
    return torch.sin(x)
