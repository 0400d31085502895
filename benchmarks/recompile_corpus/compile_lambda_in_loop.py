"""`torch.compile` of a lambda inside the loop, closing over the loop variable: each new function
shares the code object and its guards fail on the closed-over value."""

import torch

x = torch.ones(4)
for scale in range(1, 5):
    scaled = torch.compile(lambda t: t * scale, backend="eager")  # recompile: compile
    scaled(x)
