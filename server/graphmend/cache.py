"""A content-addressed cache of diagnostics, so `graphmend check` skips files it has seen unchanged.

The key is the file's bytes, its resolved path (relative imports and settings depend on where it
is), the effective settings, and graphmend's version and code: any change to one of them is a miss.
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
from .diagnostics import Applicability, Diagnostic, Fix, RelatedLocation, Severity, TextEdit
from .settings import Settings
from .source import Position, Range


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """graphmend's own sources: a changed rule or rewrite invalidates the cache, not only a new version."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory / f"{__version__}-{_code_fingerprint()}"

    def key(self, path: Path, data: bytes, settings: Settings) -> str:
        digest = hashlib.sha256()
        for part in (str(path.resolve()).encode(), repr((settings.select, settings.ignore, settings.module_forward_is_compiled)).encode(), data):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def get(self, key: str) -> list[Diagnostic] | None:
        try:
            raw = (self.directory / key[:2] / f"{key}.json").read_text(encoding="utf-8")
            return [_diagnostic(item) for item in json.loads(raw)]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or unreadable: analyse again

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        folder = self.directory / key[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump([_plain(d) for d in diagnostics], handle)
            os.replace(temporary, folder / f"{key}.json")
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
        related=tuple(RelatedLocation(_range(r["range"]), r["message"]) for r in raw.get("related", ())),
        fix=None
        if fix is None
        else Fix(fix["title"], Applicability(fix["applicability"]), tuple(TextEdit(_range(e["range"]), e["new_text"]) for e in fix["edits"])),
        data=dict(raw.get("data", {})),
    )
