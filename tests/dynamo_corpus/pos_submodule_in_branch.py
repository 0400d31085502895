"""A branch that runs a submodule built as `torch.nn.Linear` in `__init__` (pure: it may run always)."""
import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 3)

    def forward(self, x):
        if x.abs().max() > 1:  # dynamo: break
            x = self.proj(x)
        return x


ENTRY = torch.compile(Gate(), backend="eager")
INPUTS = [(torch.full((2, 3), 2.0),), (torch.full((2, 3), 0.5),)]
