"""`torch._dynamo.disable()` and `torch.compiler.disable()` called bare inside compiled code: each only
makes a decorator, and Dynamo skips the call (gb0007) (issue 56)."""
import torch


@torch.compile(backend="eager")
def step(x):
    y = torch.relu(x)
    torch._dynamo.disable()  # dynamo: break
    z = y * 2
    torch.compiler.disable()  # dynamo: break
    return z + 1


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
