"""A helper that compiles a nested function every time it is called, closing over its argument."""

import torch


def make_scaler(factor):
    def scale(x):
        return x * factor  # recompile: compile

    return torch.compile(scale, backend="eager")


x = torch.ones(4)
for factor in (2, 3, 4):
    make_scaler(factor)(x)
