"""One script: the compiled function, its fix and the loop are all in the main script."""

import sys

import torch


@torch.compile(backend="eager")
def step(x):
    if x.sum() > 0:
        x = x * 0.5
    else:
        x = x + 1
    return x


if __name__ == "__main__":
    print("running", __file__.rsplit("/", 1)[-1], sys.argv[1:], __name__)
    x = torch.randn(4)
    for _ in range(4):
        x = step(x)
    print(x.tolist())
    sys.exit(0)  # an exit code other than 0 is a failed run, which proves nothing (issue 69)
