import torch

from .utils import is_compiling


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        if not is_compiling() and (x == 0).any():
            print("zeros in the input")
        return self.proj(x)
