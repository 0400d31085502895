"""Serve rewritten source in the command's processes, in place of the files it rewrites.

An import hook first on `sys.meta_path` finds each module as Python would and, when its file is
one the proof rewrote, loads it from the rewritten text compiled under the file's own path: the
module's `__file__`, its spec and every other file stay as they are, and nothing is written to
`__pycache__` (a bytecode cache keyed by the original file's mtime would serve the rewrite to later
runs). `linecache` holds the rewritten lines, so tracebacks and `inspect.getsource` (TorchScript)
see the code that runs.

The main script (`python train.py`) is not imported: Python runs the file itself. An audit hook on
`cpython.run_file` runs the rewritten script in `__main__` instead, then ends the process as Python
would have (the exit code, the traceback of an uncaught exception).
"""

from __future__ import annotations

import importlib.machinery
import linecache
import os
import sys
import types
from typing import Any

from .finders import DelegatingFinder


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


LOADED: set[str] = set()  # the rewritten files this process ran (a proof checks each fix's was)


class _ServedLoader(importlib.machinery.SourceFileLoader):
    """A module's own loader, but its code is the rewritten text and no bytecode is cached."""

    def __init__(self, fullname: str, path: str, text: str) -> None:
        super().__init__(fullname, path)
        self.text = text

    def get_source(self, fullname: str) -> str:
        return self.text

    def get_code(self, fullname: str) -> types.CodeType:
        _cache_lines(self.path, self.text)
        LOADED.add(_real(self.path))
        return compile(self.text, self.path, "exec", dont_inherit=True)


class ServingFinder(DelegatingFinder):
    """Finds modules with the finders after it; serves the ones whose file was rewritten."""

    def __init__(self, served: dict[str, str]) -> None:
        super().__init__()
        self.served = {_real(path): text for path, text in served.items()}

    def wants(self, fullname: str) -> bool:
        return bool(self.served)

    def adjust(self, fullname: str, spec: importlib.machinery.ModuleSpec) -> None:
        origin = spec.origin
        if origin and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            text = self.served.get(_real(origin))
            if text is not None:
                spec.loader = _ServedLoader(fullname, origin, text)
                spec.cached = None


def _cache_lines(path: str, text: str) -> None:
    """linecache keeps entries with no mtime until cleared: they are never checked against the file."""
    linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)


def install(served: dict[str, str]) -> None:
    """Serve `served` (a file's path → its rewritten text) in this process."""
    finder = ServingFinder(served)
    sys.meta_path.insert(0, finder)
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else None
    if script is not None and _real(script) in finder.served:
        sys.addaudithook(_MainScript(script, finder.served[_real(script)]))


class _MainScript:
    """Runs the rewritten main script when Python is about to run the file itself."""

    __cantrace__ = True  # the script runs inside this hook: debuggers, coverage and profilers still see it

    def __init__(self, script: str, text: str) -> None:
        self.script = script
        self.text = text
        self.done = False

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "cpython.run_file" or self.done:
            return
        self.done = True
        main = sys.modules["__main__"]
        path = str(args[0]) if args else self.script
        loader = _ServedLoader("__main__", path, self.text)
        main.__file__, main.__loader__ = path, loader  # as Python sets them
        main.__dict__["__cached__"] = None
        code = loader.get_code("__main__")
        try:
            exec(code, main.__dict__)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:  # noqa: BLE001  (as Python reports an uncaught exception)
            error = sys.exc_info()[1]
            assert error is not None
            inner = error.__traceback__.tb_next if error.__traceback__ is not None else None  # not this frame
            sys.excepthook(type(error), error.with_traceback(inner), inner)
            raise SystemExit(1) from None
        raise SystemExit(0)
