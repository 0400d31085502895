"""A content-addressed cache of diagnostics and project summaries, so `graphmend check` skips files
it has seen unchanged.

The key is the file's bytes, its resolved path (relative imports and settings depend on where it
is), the effective settings, what the rest of the project says about the file (its
`ProjectContext`), and graphmend's version and code: any change to one of them is a miss. Entries
are JSON (never pickle: a cache folder must not be a way to run code).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import __version__, untrusted
from .diagnostics import (
    Applicability,
    Diagnostic,
    FindingData,
    Fix,
    RelatedLocation,
    Severity,
    TextEdit,
)
from .project import ModuleSummary, context_key, summary_from_json, summary_to_json
from .regions import ProjectContext
from .settings import Settings
from .signing import user_salt
from .source import Position, Range


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """graphmend's own sources: a changed rule or rewrite invalidates the cache, not only a new version."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


MAX_ENTRY_BYTES = 64 << 20  # a cache entry: a larger one is not read


@lru_cache(maxsize=1)
def _salt() -> bytes:
    """This user's salt in every key (`signing.user_salt`): entries a repository ships never match."""
    return user_salt()


_GITIGNORE = "# Automatically created by graphmend.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by graphmend.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


class Cache:
    def __init__(self, directory: Path) -> None:
        self.root = directory
        self.directory = directory / f"{__version__}-{_code_fingerprint()}"
        self._marked = False

    def key(
        self, path: Path, data: bytes, settings: Settings, context: ProjectContext | None, kind: str = "diagnostics"
    ) -> str:
        digest = hashlib.sha256()
        parts = (
            kind.encode(),
            str(path.resolve()).encode(),
            repr(
                (
                    settings.select,
                    settings.ignore,
                    settings.module_forward_is_compiled,
                    settings.max_file_size_kb,
                    settings.assume_training,
                    settings.assume_dtypes,
                    settings.layer_skip,
                    settings.cuda_graphs,
                    settings.target_torch,
                    sorted(settings.module_bases),
                )
            ).encode(),
            context_key(context).encode() if context is not None else b"",
            data,
            _salt(),
        )
        for part in parts:
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def get(self, key: str) -> list[Diagnostic] | None:
        try:
            return [_diagnostic(item) for item in self._read("diagnostics", key)]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or unreadable: analyse again

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        self._write(self._file("diagnostics", key), [_plain(d) for d in diagnostics])

    def get_summary(self, key: str) -> ModuleSummary | None:
        try:
            return summary_from_json(self._read("summaries", key))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_summary(self, key: str, summary: ModuleSummary) -> None:
        self._write(self._file("summaries", key), summary_to_json(summary))

    def _file(self, kind: str, key: str) -> Path:
        return self.directory / kind / key[:2] / f"{key}.json"

    def _owned(self) -> bool:
        """No folder of the cache is a link: a repository that ships `.graphmend_cache` as a link
        would have graphmend read and write wherever it points."""
        folders = [self.root, self.directory]
        return not any(os.path.islink(folder) for folder in folders)

    def _read(self, kind: str, key: str) -> Any:
        target = self._file(kind, key)
        if not self._owned() or os.path.islink(target.parent.parent) or os.path.islink(target.parent):
            raise OSError("a linked cache folder")
        return untrusted.load_json(target, MAX_ENTRY_BYTES)

    def _mark(self) -> None:
        """A cache folder ignores itself (a `.gitignore` of `*`, as Ruff's does) and says it is a
        cache (CACHEDIR.TAG, which backup tools skip): it never shows in `git status`. Written only
        where nothing is (no link followed)."""
        self._marked = True
        self.root.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            try:
                untrusted.write_new(self.root / name, text)  # there already (or a link): left as it is
            except OSError:
                continue

    def _write(self, target: Path, value: Any) -> None:
        try:
            if not self._owned():
                return
            if not self._marked:
                self._mark()
            untrusted.owned_folders(self.root, target.parent.relative_to(self.root))  # none made through a link
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(value, handle)
            os.replace(temporary, target)
        except OSError:
            pass  # a read-only or full disk costs speed, never results


def _plain(diagnostic: Diagnostic) -> dict[str, Any]:
    return asdict(diagnostic)


def _position(raw: dict[str, int]) -> Position:
    return Position(raw["line"], raw["character"])


def _range(raw: dict[str, Any]) -> Range:
    return Range(_position(raw["start"]), _position(raw["end"]))


def _diagnostic(raw: dict[str, Any]) -> Diagnostic:
    fix = raw.get("fix")
    return Diagnostic(
        code=raw["code"],
        message=raw["message"],
        severity=Severity(raw["severity"]),
        range=_range(raw["range"]),
        reason_id=raw.get("reason_id"),
        related=tuple(
            RelatedLocation(_range(r["range"]), r["message"], r.get("path"), r.get("kind", "compiled"))
            for r in raw.get("related", ())
        ),
        fix=None
        if fix is None
        else Fix(
            fix["title"],
            Applicability(fix["applicability"]),
            tuple(TextEdit(_range(e["range"]), e["new_text"]) for e in fix["edits"]),
            tuple(fix.get("hazards", ())),
        ),
        data=FindingData.from_json(raw.get("data") or {}),
    )
