"""One reader for every file graphmend did not write in this process (issue 68): run files, proof
records, settings, notebooks' JSON, source read for a run's status. A repository can ship any of
them, as a FIFO (an open that blocks forever), a link to `/dev/zero` or to a file outside the
project, JSON nested a million deep or holding `NaN`. Each read here opens a regular file only,
never through a link, without blocking, and reads at most a cap; JSON is parsed with bounded
nesting and finite numbers. What fails raises `UntrustedFileError` (an OSError, which callers
already expect of a file), never RecursionError or MemoryError. graphmend's own folders in a
project (`.graphmend/runs`, `.graphmend/proofs`) are made here too, never through a link.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 8 * 1024 * 1024  # a proof record or a run's summary: kilobytes as graphmend writes them
MAX_DEPTH = 64  # graphmend writes JSON at most a few levels deep
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class UntrustedFileError(OSError):
    """A file graphmend will not read: not a regular file, a link, too large, or not the JSON it writes."""


def _open(path: Path, follow_links: bool) -> int:
    """A descriptor of `path` opened without blocking (a FIFO opens, then is refused) and, unless
    `follow_links`, not through a link in its last component (nor opened at all when `lstat` shows
    it is no regular file; the check on the descriptor stands where it changed in between)."""
    if not follow_links:
        try:
            mode = os.lstat(path).st_mode
        except OSError as error:
            raise UntrustedFileError(f"{path}: cannot read: {error.strerror or error}") from None
        if stat.S_ISLNK(mode):
            raise UntrustedFileError(f"{path}: a symbolic link, not followed")
        if not stat.S_ISREG(mode):
            raise UntrustedFileError(f"{path}: not a regular file")
    try:
        descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | (0 if follow_links else _NOFOLLOW))
    except OSError as error:
        raise UntrustedFileError(f"{path}: cannot read: {error.strerror or error}") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise UntrustedFileError(f"{path}: not a regular file")
    return descriptor


def read_bytes(path: Path, limit: int, follow_links: bool = False) -> bytes:
    """At most `limit` bytes of the regular file `path`; UntrustedFileError for anything else or
    for a larger file (read up to the cap, so a file that grows while read cannot fill memory)."""
    descriptor = _open(path, follow_links)
    with os.fdopen(descriptor, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            raise UntrustedFileError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > limit:
        raise UntrustedFileError(f"{path}: larger than {limit // 1024} KB")
    return data


def read_text(path: Path, limit: int, follow_links: bool = False) -> str:
    """`read_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_bytes(path, limit, follow_links).decode("utf-8", errors="replace")


def lines(path: Path, line_limit: int, total_limit: int) -> Iterator[bytes]:
    """The lines of the regular file `path`, streamed: one longer than `line_limit` as empty bytes
    (the caller counts it as skipped), and none after `total_limit` bytes; nothing from a file that
    is not a regular file or is a link."""
    try:
        descriptor = _open(path, follow_links=False)
    except UntrustedFileError:
        return
    read = 0
    with os.fdopen(descriptor, "rb") as handle:
        try:
            while read < total_limit:
                raw = handle.readline(line_limit + 1)
                if not raw:
                    return
                read += len(raw)
                if len(raw) > line_limit:
                    while raw and not raw.endswith(b"\n") and read < total_limit:  # the rest of that line
                        raw = handle.readline(line_limit + 1)
                        read += len(raw)
                    yield b""
                else:
                    yield raw
        except OSError:
            return


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"a number out of range: {text}")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON graphmend writes")


def _depth(value: Any) -> int:
    """How deep containers nest in a parsed JSON value, without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


def loads(text: str | bytes, max_depth: int = MAX_DEPTH, finite: bool = True) -> Any:
    """JSON as graphmend writes it: finite numbers only (no `NaN`, `Infinity`, `1e400`; `finite`
    False lets them through, as a notebook's outputs may hold them), nested at most `max_depth`
    deep; ValueError for anything else, RecursionError and MemoryError included."""
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_no_constant) if finite else json.loads(text)
    except (RecursionError, MemoryError):
        raise ValueError("JSON nested too deeply or too large") from None
    if _depth(value) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth}")
    return value


def load_json(path: Path, limit: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON file graphmend wrote (or a repository says it did): `read_bytes` then `loads`;
    UntrustedFileError for either failing."""
    data = read_bytes(path, limit)
    try:
        return loads(data, max_depth)
    except ValueError as error:
        raise UntrustedFileError(f"{path}: {error}") from None


def real_folder(path: Path) -> bool:
    """`path` is a folder and not a link to one (a shipped `.graphmend/runs` linking elsewhere)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def ours(path: Path) -> bool:
    """`path` exists and belongs to the user running graphmend, as git requires of a repository it
    reads settings from: a `pyproject.toml` or a `.graphmend` another user planted in a shared
    folder above the user's (`/tmp`) is not the user's project. True where there are no owners."""
    try:
        owner = os.lstat(path).st_uid
    except OSError:
        return False
    return not hasattr(os, "getuid") or owner == os.getuid()


def owned_folders(root: Path, relative: Path) -> Path:
    """`root / relative`, each missing folder made: none is made or entered through a link or in a
    folder of another user's (a repository that ships `.graphmend` as a link to a folder elsewhere
    would have graphmend write there). Raises UntrustedFileError where one is."""
    current = root
    for part in relative.parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
        if not real_folder(current) or not ours(current):
            raise UntrustedFileError(f"{current}: a link or another user's folder; graphmend writes nothing through it")
    return current


def write_new(path: Path, text: str) -> bool:
    """Write `text` to `path` only where nothing is (no link followed, nothing overwritten); False
    where something already was."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True
