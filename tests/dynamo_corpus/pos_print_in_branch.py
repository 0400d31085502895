"""A print inside each branch of a data-dependent `if`: the message must follow the branch taken."""
import torch


@torch.compile(backend="eager")
def report(x):
    if x.sum() > 0:  # dynamo: break
        y = x * 2
        print("positive branch:", y)  # dynamo: break
    else:
        y = x - 1
        print("negative branch")  # dynamo: break
    return y


ENTRY = report
INPUTS = [
    (torch.ones(3),),
    (-torch.ones(3),),
]
