"""An if/elif/else chain with two data-dependent conditions."""
import torch


@torch.compile(backend="eager")
def bucket(x):
    s = x.sum()
    if s > 5:  # dynamo: break
        y = x * 0.1
    elif s < -5:  # dynamo: break
        y = x * -0.1
    else:
        y = x
    return y + 1


ENTRY = bucket
INPUTS = [
    (torch.full((4,), 3.0),),
    (torch.full((4,), -3.0),),
    (torch.full((4,), 0.5),),
]
