"""Calls from compiled code to functions decorated `@torch.compiler.disable` / `@torch._dynamo.disable`
(gb0098), and `torch._dynamo.disable(f)(x)` inside compiled code (gb0007)."""
import torch


@torch.compiler.disable
def log_stats(x):
    print("mean", x.mean())  # not traced: no break of its own
    return x.mean()


@torch._dynamo.disable
def clip(x):
    return x.clamp(-1, 1)


def helper(x):
    return x * 3


@torch.compile(backend="eager")
def forward(x):
    y = x * 2
    stats = log_stats(y)  # dynamo: break
    y = clip(y)  # dynamo: break
    z = torch._dynamo.disable(helper)(y)  # dynamo: break
    return y + z + stats


ENTRY = forward
INPUTS = [(torch.arange(1.0, 4.0),)]
