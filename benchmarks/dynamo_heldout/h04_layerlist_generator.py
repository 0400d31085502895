"""A LayerList container yields its layers from a generator-based __iter__ and reports
its depth through __len__; a compiled residual stack walks it in forward."""
import torch
import torch.nn as nn


class LayerList:
    def __init__(self, layers):
        self._layers = list(layers)

    def __len__(self):
        return len(self._layers)

    def __iter__(self):
        for layer in self._layers:
            yield layer


class ResidualStack(nn.Module):
    def __init__(self, width=4, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.layers = LayerList(self.blocks)

    def forward(self, x):
        scale = 1.0 / len(self.layers)
        for layer in self.layers:
            x = x + scale * torch.relu(layer(x))
        return x


torch.manual_seed(0)
model = torch.compile(ResidualStack(), backend="eager")

ENTRY = model
INPUTS = [
    (torch.arange(4.0),),
    (-torch.ones(4),),
]
