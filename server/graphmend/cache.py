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

from . import __version__
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
from .source import Position, Range


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """graphmend's own sources: a changed rule or rewrite invalidates the cache, not only a new version."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


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
        )
        for part in parts:
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def get(self, key: str) -> list[Diagnostic] | None:
        try:
            raw = self._file("diagnostics", key).read_text(encoding="utf-8")
            return [_diagnostic(item) for item in json.loads(raw)]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or unreadable: analyse again

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        self._write(self._file("diagnostics", key), [_plain(d) for d in diagnostics])

    def get_summary(self, key: str) -> ModuleSummary | None:
        try:
            return summary_from_json(json.loads(self._file("summaries", key).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_summary(self, key: str, summary: ModuleSummary) -> None:
        self._write(self._file("summaries", key), summary_to_json(summary))

    def _file(self, kind: str, key: str) -> Path:
        return self.directory / kind / key[:2] / f"{key}.json"

    def _mark(self) -> None:
        """A cache folder ignores itself (a `.gitignore` of `*`, as Ruff's does) and says it is a
        cache (CACHEDIR.TAG, which backup tools skip): it never shows in `git status`."""
        self._marked = True
        self.root.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            if not (self.root / name).exists():
                (self.root / name).write_text(text, encoding="utf-8")

    def _write(self, target: Path, value: Any) -> None:
        try:
            if not self._marked:
                self._mark()
            target.parent.mkdir(parents=True, exist_ok=True)
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
