"""Crops a signal to its first n samples and builds a strided index ramp, with the crop
length and stride passed as plain Python ints, directly or via a Config object."""
import torch


class CropConfig:
    def __init__(self, n, stride):
        self.n = n
        self.stride = stride


@torch.compile(backend="eager")
def crop_and_index(x, n, stride):
    if n > 1:
        head = x[:n]
    else:
        head = x[:1] * 2
    idx = torch.arange(0, head.shape[0] * stride, stride)
    return head.sum() + idx.sum(), head.shape[0]


@torch.compile(backend="eager")
def crop_with_config(x, cfg):
    tiled = x[: cfg.n].repeat(cfg.stride)
    return tiled * torch.arange(tiled.shape[0])


def run(x, n, stride):
    cfg = CropConfig(n, stride)
    return crop_and_index(x, n, stride), crop_with_config(x, cfg)


ENTRY = run
INPUTS = [
    (torch.arange(4.0), 3, 2),
    (torch.ones(3), 1, 1),
]
