"""Files as a run finds and reads them: discovery (with what was skipped and why), Python source
decoded the way Python decodes it, notebooks read as one module, each file's settings, and the
atomic write a fix ends with. Every path front and pipeline reads through here, once per run."""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import notebooks
from .settings import Settings, SettingsError, settings_for

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "node_modules",
        ".eggs",
        "site-packages",
        ".ipynb_checkpoints",
    }
)


class SourceError(Exception):
    """A file that is not Python text graphmend can read (binary, undecodable, unreadable)."""


def read_source(path: Path) -> str:
    """Read a Python file the way Python would (PEP 263 encoding cookie, BOM), or raise SourceError."""
    return decode_source(read_bytes(path))[0]


def read_bytes(path: Path) -> bytes:
    """A file's bytes, or SourceError for what cannot be read or is not a regular file."""
    try:
        # Non-blocking open, then a check on what was opened: a FIFO named `x.py` (or one swapped in
        # after discovery) is refused instead of blocking forever.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise SourceError(_unreadable_kind(path) or "not a regular file")
        try:
            return handle.read()
        except OSError as error:
            raise SourceError(f"cannot read: {error.strerror or error}") from None


def decode_source(data: bytes) -> tuple[str, str]:
    """Python source bytes as text the way Python decodes them (PEP 263 cookie, BOM), and the
    encoding used; SourceError for binary or undecodable data."""
    if b"\x00" in data:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # undecodable first lines, or a cookie naming no known codec
        if str(error).startswith("unknown encoding"):
            raise SourceError(f"unknown source encoding: {error}") from None
        raise SourceError("not valid utf-8 text, and no PEP 263 encoding declaration") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise SourceError(f"not valid {error.encoding} text at byte {error.start}") from None


def is_notebook(path: Path | None) -> bool:
    return path is not None and path.suffix == notebooks.SUFFIX


def read_notebook(path: Path, verify: bool = True) -> notebooks.Notebook:
    """A Jupyter notebook's code cells as one module (see `notebooks`), or SourceError."""
    return notebook_from_text(decode_notebook(read_bytes(path)), verify)


def decode_notebook(data: bytes) -> str:
    """A notebook file's bytes as text (JSON is UTF-8, a BOM allowed), or SourceError."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(f"not a notebook: not valid utf-8 at byte {error.start}") from None


def notebook_from_text(text: str, verify: bool = True) -> notebooks.Notebook:
    try:
        return notebooks.read(text, verify)
    except notebooks.NotebookError as error:
        raise SourceError(str(error)) from None


@dataclass(frozen=True)
class Skipped:
    """A path that looked like a Python file but was left alone, and why."""

    path: Path
    reason: str


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Skipped]]:
    """The Python files and Jupyter notebooks under `paths` (recursively, skipping VCS, virtualenv,
    cache and build folders and what `extend-exclude` names), and what was passed over with its reason.

    Only regular files are read: a FIFO, socket or device named `x.py` would block or never end. A
    symbolic link is followed when its target lies inside one of `paths` (like Black), and reported
    once, under the target's own path when that is found too; a link out of the tree is skipped. A
    file named explicitly is always included, whatever its suffix, when it is a regular file.
    """
    roots = [Path(os.path.realpath(p)) for p in paths]
    found: dict[str, Path] = {}  # real path → the path it is reported under
    skipped: list[Skipped] = []
    settings_by_directory: dict[str, Settings] = {}

    def excluded(path: Path) -> bool:
        """Passed over by the `extend-exclude` of the settings that apply where it lies."""
        directory = str(path.parent)
        if directory not in settings_by_directory:
            try:
                settings_by_directory[directory] = settings_for(path.parent)
            except SettingsError:
                settings_by_directory[directory] = Settings()  # reported when the file's settings are read
        return settings_by_directory[directory].excludes(path)

    def consider(path: Path, explicit: bool) -> None:
        reason = _unreadable_kind(path)
        if reason is not None:
            skipped.append(Skipped(path, reason))
            return
        real = os.path.realpath(path)
        if not explicit and path.is_symlink() and not any(_inside(Path(real), root) for root in roots):
            skipped.append(Skipped(path, f"a symbolic link to {real}, outside the checked tree"))
            return
        if real not in found or (found[real].is_symlink() and not path.is_symlink()):
            found[real] = path

    for root in paths:
        if root.is_dir():
            for directory, subdirectories, files in os.walk(root):
                subdirectories[:] = sorted(
                    d
                    for d in subdirectories
                    if d not in SKIPPED_DIRECTORIES
                    and not (Path(directory, d) / "pyvenv.cfg").exists()
                    and not excluded(Path(directory, d))
                )
                for name in sorted(files):
                    if name.endswith((".py", ".pyi", notebooks.SUFFIX)) and not excluded(Path(directory, name)):
                        consider(Path(directory, name), explicit=False)
        elif root.exists() or root.is_symlink():
            consider(root, explicit=True)
    return list(found.values()), skipped


def discover_python_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The files `discover` finds (what it skips is left out silently)."""
    yield from discover(paths)[0]


def _unreadable_kind(path: Path) -> str | None:
    """Why `path` is not a regular file graphmend can read, or None when it is one."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if path.is_symlink() else "no such file"
    except OSError as error:
        return f"cannot be examined ({error.strerror or error})"
    if stat.S_ISREG(mode):
        return None
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a directory"
        if stat.S_ISDIR(mode)
        else "a device"
    )
    return f"not a regular file ({kind})"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def project_files(files: Iterable[Path]) -> list[Path]:
    """The files whose summaries make the project of `files`: where Python resolves their imports.
    For a file in a package, every file of its top-level package; for a file in no package (a
    script), the modules beside it and the packages beside it, as `sys.path[0]` would see them."""
    packages: set[Path] = set()
    scripts: set[Path] = set()
    for file in files:
        folder = Path(os.path.realpath(file)).parent
        if (folder / "__init__.py").is_file():
            while (folder.parent / "__init__.py").is_file() and folder.parent != folder:
                folder = folder.parent
            packages.add(folder)
        else:
            scripts.add(folder)
    roots: list[Path] = sorted(packages)
    for folder in sorted(scripts):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        roots += [
            e
            for e in entries
            if (
                e.name.endswith(".py")
                or (e.is_dir() and e.name not in SKIPPED_DIRECTORIES and (e / "__init__.py").is_file())
            )
            and not (
                e.is_symlink() and not _inside(Path(os.path.realpath(e)), folder)
            )  # a link out: not read (issue 68)
        ]
    found = {os.path.realpath(f): f for f in discover(roots)[0] if not is_notebook(f)}  # no one imports a notebook
    for file in files:
        found.setdefault(os.path.realpath(file), file)
    return list(found.values())


def write_atomically(path: Path, text: str, encoding: str) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".graphmend")
    try:
        with os.fdopen(descriptor, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def iter_settings(paths: Iterable[Path], overrides: Mapping[str, Any] | None = None) -> Iterator[tuple[Path, Settings]]:
    """Each Python file under `paths` with its settings (nearest pyproject.toml plus `overrides`)."""
    merged: dict[Settings, Settings] = {}  # the overrides validated once per settings read
    for path in discover_python_files(paths):
        base = settings_for(path.parent)
        if base not in merged:
            merged[base] = base.merged(overrides or {})
        yield path, merged[base].for_file(path)
