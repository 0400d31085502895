"""The call form `torch.compile(backend="eager")(f)`: options first, the function after (and a module
compiled the same way), as against `torch.compile(f, backend="eager")`."""
import torch
from torch import nn


def _normalise(x):
    print("normalising", x.shape)  # dynamo: break
    return x / x.norm()


normalise = torch.compile(backend="eager")(_normalise)


class Gate(nn.Module):
    def forward(self, x):
        scale = x.abs().max().item()  # dynamo: break
        return x / scale


gate = torch.compile(backend="eager", dynamic=False)(Gate())


def run(x):
    return normalise(x) + gate(x)


ENTRY = run
INPUTS = [(torch.arange(1.0, 4.0),)]
