"""Two contextlib.contextmanager helpers wrap compiled inference code: one turns autograd
off for a block, the other announces which named section is running."""
import contextlib

import torch


@contextlib.contextmanager
def autograd_off():
    prev = torch.is_grad_enabled()
    torch._C._set_grad_enabled(False)
    try:
        yield
    finally:
        torch._C._set_grad_enabled(prev)


@contextlib.contextmanager
def section(name):
    print(f"[section] {name}")  # predicted: break
    yield name


@torch.compile(backend="eager")
def infer(x, w):
    with autograd_off():
        y = torch.tanh(x * w)
    return y.sum()


@torch.compile(backend="eager")
def infer_logged(x, w):
    with section("head") as tag:
        y = torch.relu(x - w)
    return y.mean(), tag


def run(x, w):
    return infer(x, w), infer_logged(x, w)


ENTRY = run
INPUTS = [
    (torch.arange(4.0), torch.ones(4)),
    (-torch.ones(3), torch.ones(3)),
]
