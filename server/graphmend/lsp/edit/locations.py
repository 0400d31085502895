"""Where things are, in both worlds: a uri's path, and graphmend's positions and ranges (code
points) in the client's position units (UTF-16 unless negotiated otherwise), and back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import PositionCodec

from ...api import Position, Range


class SomeLines(dict[int, str]):
    """Some lines of a file by number: enough for the position codec on those lines."""

    def __getitem__(self, line: int) -> str:
        return self.get(line, "")


def path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def lsp_range(r: Range) -> types.Range:
    """The same range as the protocol's type, still in code points."""
    return types.Range(types.Position(r.start.line, r.start.character), types.Position(r.end.line, r.end.character))


def to_client_range(codec: PositionCodec, lines: Sequence[str] | SomeLines, r: Range) -> types.Range:
    """`r` in the client's units; `lines` are the text's (or at least those `r` touches)."""
    return codec.range_to_client_units(lines, lsp_range(r))  # type: ignore[arg-type]  # SomeLines: only lines read


def from_client_position(codec: PositionCodec, lines: Sequence[str], position: types.Position) -> Position:
    converted = codec.position_from_client_units(lines, position)
    return Position(converted.line, converted.character)


def range_json(r: types.Range) -> dict[str, Any]:
    """A range as it travels in a diagnostic's `data` (plain JSON, which the client sends back)."""
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def range_from_json(raw: dict[str, Any]) -> types.Range:
    """A range as `range_json` wrote it (KeyError or TypeError for one it did not)."""
    start, end = raw["start"], raw["end"]
    return types.Range(types.Position(start["line"], start["character"]), types.Position(end["line"], end["character"]))
