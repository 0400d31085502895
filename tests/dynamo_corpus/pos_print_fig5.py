"""Paper Figure 5: a `print` of a tensor in the middle of a compiled function."""
import torch


@torch.compile(backend="eager")
def f(x):
    x = torch.relu(x)
    print("tensor:", x)  # dynamo: break
    return torch.sin(x)


ENTRY = f
INPUTS = [
    (torch.tensor([1.0, -1.0]),),
]
