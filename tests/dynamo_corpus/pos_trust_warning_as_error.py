"""Issue 42, class 11: a warning, then module state written; under warnings-as-errors the original raises before it."""
import warnings

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        warnings.warn("deprecated input layout")  # dynamo: break
        self.calls.add_(1)
        return x * 2.0


ENTRY = torch.compile(Net(), backend="eager")
INPUTS = [(torch.ones(3),)]
