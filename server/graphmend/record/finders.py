"""An import finder that lets the others find a module, then changes the spec they found.

`fix --prove` puts two first on `sys.meta_path` in a command's processes: `serve.ServingFinder`
(a rewritten file's module loads the rewrite) and `probe`'s (the observer starts once torch is
imported). Each asks the finders after it, which include the other; while one asks about a name,
it steps aside for that name, in its thread, so that neither asks itself through the other.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import types
from collections.abc import Sequence


class DelegatingFinder(importlib.abc.MetaPathFinder):
    """Finds what the other finders find, for the names it `wants`, and `adjust`s the spec."""

    def __init__(self) -> None:
        self._local = threading.local()  # the names this thread is looking up (each thread its own)

    def wants(self, fullname: str) -> bool:
        raise NotImplementedError

    def adjust(self, fullname: str, spec: importlib.machinery.ModuleSpec) -> None:
        raise NotImplementedError

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        looking: set[str] = self._local.__dict__.setdefault("names", set())
        if fullname in looking or not self.wants(fullname):
            return None
        looking.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    self.adjust(fullname, spec)
                    return spec
            return None
        finally:
            looking.discard(fullname)
