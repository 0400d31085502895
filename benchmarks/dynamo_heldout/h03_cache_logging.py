"""A module-level Cache of projection weights supports `in`, indexing and item assignment,
and reports hits through a logging logger; a compiled projection reuses cached weights."""
import logging

import torch

log = logging.getLogger(__name__)


class Cache:
    def __init__(self):
        self._store = {}
        self.hits = 0

    def __contains__(self, key):
        return key in self._store

    def __getitem__(self, key):
        self.hits += 1
        log.debug("cache hit for %s", key)  # predicted: break
        return self._store[key]

    def __setitem__(self, key, value):
        self._store[key] = value


CACHE = Cache()


@torch.compile(backend="eager")
def project(x, key):
    if key in CACHE:
        w = CACHE[key]
    else:
        w = torch.linspace(-1.0, 1.0, x.shape[-1])
        CACHE[key] = w
    return (x * w).sum()


def run(x, key):
    first = project(x, key)
    second = project(x, key)
    return first, second, CACHE.hits


ENTRY = run
INPUTS = [
    (torch.arange(4.0), "wide"),
    (torch.ones(3), "narrow"),
]
