import torch

from .base import Layer


class Block(Layer):
    def forward(self, x):
        if x.sum() > 0:  # dynamo: break
            x = x * 2
        return self.check_finite(x)


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
