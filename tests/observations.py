"""Observations of unchanged programs, kept between runs: a corpus original run under Dynamo gives
the same answer until the program, torch or the harness that observes it changes, so each is
observed once per torch version (issue 51) and the rewrite, the thing under test, every time.

The cache is `$GRAPHMEND_TEST_CACHE` (default `~/.cache/graphmend/observations`); `off` turns it
off. An entry's key holds the program's text and its path in the repository (not where the clone
is: a new clone on the same machine finds what an old one observed), the versions of Python, torch, NumPy and
transformers, and the text of every harness module; a value that does not pickle is not kept."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import pathlib
import pickle
import sys
import tempfile
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_HERE = pathlib.Path(__file__).resolve().parent
_REPOSITORY = _HERE.parent
# The modules whose code decides what an observation holds.
_HARNESS = ("dynamo_harness.py", "where_users_run.py", "where_code_runs.py", "observations.py")


def _folder() -> pathlib.Path | None:
    setting = os.environ.get("GRAPHMEND_TEST_CACHE", "")
    if setting == "off":
        return None
    if setting:
        return pathlib.Path(setting)
    return (
        pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "graphmend" / "observations"
    )


FOLDER = _folder()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def _environment() -> bytes:
    parts = [sys.version, *(_version(p) for p in ("torch", "numpy", "transformers"))]
    parts += [(_HERE / name).read_text(encoding="utf-8") for name in _HARNESS]
    return "\0".join(parts).encode()


_ENVIRONMENT = _environment()


def _repository_path(path: pathlib.Path) -> str:
    resolved = path.resolve()
    return resolved.relative_to(_REPOSITORY).as_posix() if resolved.is_relative_to(_REPOSITORY) else str(resolved)


def of_original(observe: Callable[..., T], path: pathlib.Path, *args: object) -> T:
    """`observe(path, *args)`, from the cache when this program was observed so before."""
    if FOLDER is None:
        return observe(path, *args)
    key = hashlib.sha256(
        b"\0".join(
            [
                _ENVIRONMENT,
                f"{observe.__module__}.{observe.__qualname__}{args!r}".encode(),
                _repository_path(pathlib.Path(path)).encode(),
                pathlib.Path(path).read_bytes(),
            ]
        )
    ).hexdigest()
    entry = FOLDER / f"{key}.pickle"
    try:
        return pickle.loads(entry.read_bytes())
    except Exception:  # absent, or written by code that is gone: observe again
        pass
    value = observe(path, *args)
    try:
        data = pickle.dumps(value)
    except Exception:  # an output of the program's own classes: observed every time
        return value
    FOLDER.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=FOLDER, suffix=".tmp")
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.replace(temporary, entry)  # whole or not at all: xdist workers share the folder
    return value
