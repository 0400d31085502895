"""Issue 42, class 6: a data-dependent if in a loop whose body also drops out."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        for layer in self.layers:
            x = self.drop(torch.relu(layer(x)))
            if x.sum() > 0:  # dynamo: break
                x = x * 0.5
        return x


ENTRY = torch.compile(Net(), backend="eager")
INPUTS = [(torch.ones(2, 4),), (-torch.ones(2, 4),)]
