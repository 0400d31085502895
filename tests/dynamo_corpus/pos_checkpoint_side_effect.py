"""A side effect on an outer Python object inside a function run under `torch.utils.checkpoint` (gb0067)."""
import torch
import torch.utils.checkpoint

seen = []


def block(x):
    seen.append(x.shape[0])  # dynamo: break
    return torch.relu(x) * 2


@torch.compile(backend="eager")
def forward(x):
    return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) + 1


ENTRY = forward
INPUTS = [(torch.arange(3.0, requires_grad=True),)]
