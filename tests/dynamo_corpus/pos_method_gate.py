"""The break is in a method called as `self._gate(h)` from `forward`."""
import torch


class GatedMLP(torch.nn.Module):
    def __init__(self, d: int = 4):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        torch.nn.init.eye_(self.fc.weight)
        torch.nn.init.zeros_(self.fc.bias)

    def _gate(self, h):
        if h.mean() > 0:  # dynamo: break
            return torch.sigmoid(h)
        return torch.tanh(h)

    def forward(self, x):
        h = self.fc(x)
        return h * self._gate(h)


ENTRY = torch.compile(GatedMLP(), backend="eager")
INPUTS = [
    (torch.ones(2, 4),),
    (-torch.ones(2, 4),),
]
