"""`@torch.compile` applied directly to a module method (`forward`)."""
import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        torch.nn.init.eye_(self.proj.weight)
        torch.nn.init.zeros_(self.proj.bias)

    @torch.compile(backend="eager")
    def forward(self, x):
        h = self.proj(x)
        if h.mean() > 0:  # dynamo: break
            h = torch.relu(h)
        else:
            h = torch.nn.functional.gelu(h)
        return h.sum(-1)


ENTRY = Head()
INPUTS = [
    (torch.ones(2, 4),),
    (-torch.ones(2, 4),),
]
