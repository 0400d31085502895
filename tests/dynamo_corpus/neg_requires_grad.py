"""`x.requires_grad` is a static tensor property: no break."""
import torch


def frozen(t):
    if t.requires_grad:
        return t.detach()
    return t


class Probe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return frozen(self.w) * frozen(x)


ENTRY = torch.compile(Probe(), backend="eager")
INPUTS = [
    (torch.ones(3),),
]
