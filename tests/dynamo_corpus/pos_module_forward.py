"""`torch.compile(Model())` where the data-dependent branch is in `forward`."""
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        torch.nn.init.eye_(self.fc.weight)
        torch.nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:  # dynamo: break
            out = h * 2
        else:
            out = h - 1
        return torch.relu(out)


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [
    (torch.ones(2, 3),),
    (-torch.ones(2, 3),),
]
