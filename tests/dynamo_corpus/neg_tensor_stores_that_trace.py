"""Tensor attribute stores Dynamo traces (measured on torch 2.13): `.data` of a parameter or an
input, `.grad` of an intermediate, an attribute of the module."""
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(3))

    def forward(self, x, v):
        self.w.data = x * 3
        v.data = x * 2
        self.last = x
        y = x * 2
        y.grad = x
        return y + self.w + v


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [
    (torch.ones(3), torch.zeros(3)),
]
