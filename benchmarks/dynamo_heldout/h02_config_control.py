"""A Config object normalises its step counter in __setattr__ and offers dict-style access
through __getitem__ and __contains__; a compiled affine transform reads and bumps it."""
import torch


class Config:
    def __init__(self, **values):
        for key, value in values.items():
            setattr(self, key, value)

    def __setattr__(self, name, value):
        if name == "steps":
            value = int(value)
        super().__setattr__(name, value)

    def __getitem__(self, name):
        return getattr(self, name)

    def __contains__(self, name):
        return hasattr(self, name)


@torch.compile(backend="eager")
def affine(x, cfg):
    y = x * cfg["scale"]
    if "shift" in cfg:
        y = y + cfg["shift"]
    cfg.steps = cfg.steps + 1
    return y


def run(x, with_shift):
    if with_shift:
        cfg = Config(scale=2.0, shift=0.5, steps=0)
    else:
        cfg = Config(scale=3.0, steps=0)
    out = affine(x, cfg)
    return out, cfg.steps


ENTRY = run
INPUTS = [
    (torch.arange(4.0), True),
    (torch.ones(3), False),
]
