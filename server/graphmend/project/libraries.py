"""Installed packages that compiled code calls into, found on disk and never imported.

Dynamo inlines whatever a compiled frame calls, in any installed package, so a `print` in a metrics
library breaks the graph of the user's `forward`. The project follows such calls into the package's
source files: a `LibraryFinder` maps a dotted module name to its file by looking in the search
folders the way Python's path finder would (a package folder's `__init__.py`, a module file, a
namespace folder), without importing the package, the user's code or torch.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable
from pathlib import Path

from ..settings import virtual_env_site_packages

# Packages whose source is never followed: Dynamo does not inline torch's own code the way it does a
# library's (it has rules for its functions), NumPy and Triton are compiled code or traced by their own
# machinery, and graphmend knows the standard library by table. A package installed in development
# mode (`pip install -e`) is found in the search folders only through its path, not followed either.
NOT_FOLLOWED = frozenset(
    {"torch", "functorch", "numpy", "triton", "graphmend", "_pytest", "pytest", "setuptools", "pip"}
)
MAX_LIBRARY_MODULES = 600  # library files one project summarises at most (a guard against walking a whole distribution)


def default_search_paths() -> tuple[Path, ...]:
    """The site-packages folders of the active virtual environment (`VIRTUAL_ENV`, the one a shell or
    editor activated for the user's project) and of the interpreter graphmend runs in."""
    paths = sysconfig.get_paths()
    found = [*virtual_env_site_packages(), paths["purelib"], paths["platlib"]]
    return tuple(Path(p) for p in dict.fromkeys(os.path.realpath(p) for p in found) if os.path.isdir(p))


class LibraryFinder:
    """Dotted module name → its source file in the search folders (memoised, misses included)."""

    def __init__(self, search_paths: Iterable[Path]) -> None:
        self.search_paths = tuple(search_paths)
        self._found: dict[str, Path | None] = {}

    def find(self, module: str) -> Path | None:
        if module in self._found:
            return self._found[module]
        parts = module.split(".")
        found = None
        if parts[0] not in NOT_FOLLOWED and all(part.isidentifier() for part in parts):
            found = next((f for root in self.search_paths if (f := _module_file(root, parts)) is not None), None)
        self._found[module] = found
        return found


def _module_file(root: Path, parts: list[str]) -> Path | None:
    """`a.b.c` under `root`: `a/b/c/__init__.py` or `a/b/c.py`, through package or namespace folders."""
    folder = root.joinpath(*parts[:-1])
    if not folder.is_dir():
        return None
    package = folder / parts[-1] / "__init__.py"
    if package.is_file():
        return package
    module = folder / f"{parts[-1]}.py"
    return module if module.is_file() else None
