"""`print` of an f-string that formats a tensor."""
import torch


@torch.compile(backend="eager")
def step(x, w):
    loss = ((x @ w) ** 2).mean()
    print(f"loss = {loss}")  # dynamo: break
    return loss * 2


ENTRY = step
INPUTS = [
    (torch.ones(2, 2), torch.eye(2)),
]
