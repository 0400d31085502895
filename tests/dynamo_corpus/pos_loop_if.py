"""A data-dependent `if` inside the body of a `for` loop over layers."""
import torch


class Stack(torch.nn.Module):
    def __init__(self, n: int = 3, d: int = 2):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(d, d, bias=False) for _ in range(n))
        for layer in self.layers:
            torch.nn.init.eye_(layer.weight)
            layer.weight.data.mul_(2.0)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            if x.abs().max() > 4.0:  # dynamo: break
                x = x / 2
        return x


ENTRY = torch.compile(Stack(), backend="eager")
INPUTS = [
    (torch.ones(1, 2),),
]
