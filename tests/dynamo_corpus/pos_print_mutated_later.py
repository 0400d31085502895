"""A tensor printed, then changed in place: a deferred print would show the later value, so the
print goes into the graph (`torch._higher_order_ops.print`)."""
import torch


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("y:", y)  # dynamo: break
    y.add_(1)
    return y


ENTRY = step
INPUTS = [(torch.ones(3),), (torch.arange(3.0),)]
