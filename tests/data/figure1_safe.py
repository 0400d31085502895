"""The paper's Figure 1 with `x_1 - y_1` for its product, whose fix is unsafe: see tests/data/README.md."""

import torch


@torch.compile()
def f(x, y):
    x_1 = x * 2
    y_1 = y * 2
    if x.sum() > 10:  # graph break: Dynamo cannot know the sum while tracing
        z = x_1 + y_1
    else:
        z = x_1 - y_1
    return torch.relu(z)
