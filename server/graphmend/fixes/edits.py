"""Applying fixes to text: non-overlapping edits in one pass, identical edits merged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..diagnostics import Fix
from ..source import Position, SourceText


def _offset(source: SourceText, position: Position, line_starts: list[int]) -> int:
    line = min(position.line, len(line_starts) - 1)
    return line_starts[line] + position.character


def _line_starts(source: SourceText) -> tuple[list[int], list[str]]:
    """Where each line starts, and the line break that ends it ("" for the last line)."""
    starts, breaks, offset = [], [], 0
    text = source.text
    for line in source.lines:
        starts.append(offset)
        offset += len(line)
        if text.startswith("\r\n", offset):
            breaks.append("\r\n")
            offset += 2
        elif offset < len(text):
            breaks.append(text[offset])
            offset += 1
        else:
            breaks.append("")
    return starts, breaks


def _file_line_break(breaks: list[str]) -> str:
    """The line break new lines take: the file's own, the one most of its lines end with (the first
    one on a tie), so that a fix keeps a mostly-LF file LF whatever the line it edits ends with."""
    counts = Counter(b for b in breaks if b)
    return counts.most_common(1)[0][0] if counts else "\n"


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Apply every fix whose edits do not overlap an earlier applied fix; return text and count.

    A fix applies whole or not at all. Identical edits from different fixes (a shared helper
    function inserted once) count once.
    """
    source = SourceText(text)
    starts, breaks = _line_starts(source)
    line_break = _file_line_break(breaks)
    chosen: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int, str]] = set()
    applied = 0
    for fix in fixes:
        spans = [
            (
                _offset(source, e.range.start, starts),
                _offset(source, e.range.end, starts),
                e.new_text.replace("\n", line_break),
            )
            for e in fix.edits
        ]
        fresh = [s for s in spans if s not in seen]
        if any(_overlaps(span, other) for span in fresh for other in chosen):
            continue
        chosen.extend(fresh)
        seen.update(fresh)
        applied += 1
    # From the end backwards; insertions at one place end up in the order they were made.
    ordered = sorted(range(len(chosen)), key=lambda i: (chosen[i][0], chosen[i][1], i), reverse=True)
    for start, end, new_text in (chosen[i] for i in ordered):
        text = text[:start] + new_text + text[end:]
    return text, applied


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # insertions conflict only strictly inside another edit
        return b[0] < a[0] < b[1] or a[0] < b[0] < a[1]
    return a[0] < b[1] and b[0] < a[1]
