"""Source text helpers: line splitting that agrees with the parser, column conversion, suppressions.

`ast` reports columns as UTF-8 byte offsets; every position graphmend hands out is a 0-based line
and a column in Unicode code points, which each front converts to its own convention.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property

# Python's tokenizer ends lines only at these; str.splitlines() also splits at \x0c, \x1c, \u2028, ...
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SUPPRESSION = re.compile(r"#\s*graphmend:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
ALL_CODES = "*"


@dataclass(frozen=True, order=True)
class Position:
    """A 0-based line and a 0-based column counted in Unicode code points."""

    line: int
    character: int


@dataclass(frozen=True, order=True)
class Range:
    start: Position
    end: Position


class SourceText:
    """A file's text with the position and suppression queries the analysis needs."""

    def __init__(self, text: str) -> None:
        self.text = text
        # A byte-order mark is not part of the code: parse without it, count it in line 0's columns.
        self.has_bom = text.startswith("\ufeff")
        self.code = text[1:] if self.has_bom else text

    @cached_property
    def lines(self) -> list[str]:
        return _LINE_BREAK.split(self.text)

    def position(self, lineno: int, byte_col: int) -> Position:
        """Convert an `ast` (1-based line, UTF-8 byte column) pair to a `Position`."""
        line_index = lineno - 1
        if line_index >= len(self.lines):
            return Position(line_index, byte_col)
        line = self.lines[line_index]
        shift = 1 if line_index == 0 and self.has_bom else 0
        if line.isascii():
            return Position(line_index, byte_col)
        code_line = line[shift:]
        return Position(line_index, shift + len(code_line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace")))

    def node_range(self, node: object) -> Range:
        """The range of an `ast` node that has location attributes."""
        start = self.position(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_lineno = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        end = self.position(end_lineno, node.col_offset if end_col is None else end_col)  # type: ignore[attr-defined]
        return Range(start, end)

    def segment(self, node: object) -> str:
        """The exact source text of an `ast` node that has location attributes."""
        r = self.node_range(node)
        lines = self.lines
        if r.start.line == r.end.line:
            return lines[r.start.line][r.start.character : r.end.character]
        parts = [lines[r.start.line][r.start.character :]]
        parts.extend(lines[r.start.line + 1 : r.end.line])
        parts.append(lines[r.end.line][: r.end.character])
        return "\n".join(parts)

    @cached_property
    def comments(self) -> list[tuple[Position, str]]:
        """Every comment (where it starts, its text), for rewrites that must keep them; none when
        the text does not tokenize."""
        if "#" not in self.text:
            return []
        found = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.code).readline):
                if token.type == tokenize.COMMENT:
                    line, column = (
                        token.start[0] - 1,
                        token.start[1] + (1 if self.has_bom and token.start[0] == 1 else 0),
                    )
                    found.append((Position(line, column), token.string))
        except (tokenize.TokenError, SyntaxError):
            return []
        return found

    @cached_property
    def suppressions(self) -> dict[int, frozenset[str]]:
        """Map 0-based line → codes suppressed there (`ALL_CODES` for a bare ignore).

        Only real comments count, so a string that merely contains the marker suppresses nothing;
        the tokenizer runs only when the marker appears at all.
        """
        if "graphmend" not in self.text:
            return {}
        found: dict[int, frozenset[str]] = {}
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if token.type != tokenize.COMMENT:
                    continue
                match = _SUPPRESSION.search(token.string)
                if match is None:
                    continue
                codes = match.group("codes")
                parsed = (
                    frozenset(c.strip().upper() for c in codes.split(",") if c.strip())
                    if codes is not None
                    else frozenset({ALL_CODES})
                )
                found[token.start[0] - 1] = found.get(token.start[0] - 1, frozenset()) | parsed
        except (tokenize.TokenError, SyntaxError):
            pass
        return found

    def is_suppressed(self, line: int, code: str) -> bool:
        codes = self.suppressions.get(line)
        return codes is not None and (ALL_CODES in codes or code in codes)
