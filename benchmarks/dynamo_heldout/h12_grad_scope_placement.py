"""A GradScope context manager switches autograd off for a block and counts its entries;
it is used from compiled code as a module global, as a module attribute, and freshly built."""
import torch
import torch.nn as nn


class GradScope:
    def __init__(self, enabled):
        self.enabled = enabled
        self.entries = 0

    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch._C._set_grad_enabled(self.enabled)
        self.entries += 1
        return self

    def __exit__(self, *exc):
        torch._C._set_grad_enabled(self.prev)
        return False


INFERENCE_SCOPE = GradScope(False)


@torch.compile(backend="eager")
def score_global(x):
    with INFERENCE_SCOPE:  # predicted: break
        y = x.sin() * 2
    return y + 1


@torch.compile(backend="eager")
def score_local(x):
    with GradScope(False):
        y = x.cos() * 2
    return y - 1


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
        self.scope = GradScope(False)

    def forward(self, x):
        with self.scope:  # predicted: break
            h = self.proj(x)
        return torch.tanh(h)


head = torch.compile(Head(), backend="eager")


def run(x):
    return score_global(x), score_local(x), head(x)


ENTRY = run
INPUTS = [(torch.arange(4.0),), (-torch.ones(4),)]
