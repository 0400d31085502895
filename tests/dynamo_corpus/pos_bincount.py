"""`torch.bincount`: its output's length is the largest value plus one, known only from the data."""
import torch


@torch.compile(backend="eager")
def histogram(labels):
    counts = torch.bincount(labels)  # dynamo: break
    return counts.float() / labels.numel()


ENTRY = histogram
INPUTS = [
    (torch.tensor([0, 1, 1, 3]),),
    (torch.tensor([2, 2, 0]),),
]
