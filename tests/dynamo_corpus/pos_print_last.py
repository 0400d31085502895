"""A `print` as the last statement before `return` still breaks."""
import torch


@torch.compile(backend="eager")
def head(x, w):
    logits = x @ w
    probs = logits.softmax(-1)
    print("probs", probs)  # dynamo: break
    return probs


ENTRY = head
INPUTS = [
    (torch.ones(1, 2), torch.eye(2)),
]
