"""Applying fixes to text: non-overlapping edits in one pass, identical edits merged."""

from __future__ import annotations

import bisect
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
    by_start: list[tuple[int, int]] = []  # the chosen spans' (start, end), sorted: clashes found by bisection
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
        if any(_clashes(span, by_start) for span in fresh):
            continue
        chosen.extend(fresh)
        for span in fresh:
            bisect.insort(by_start, span[:2])
        seen.update(fresh)
        applied += 1
    # In order of place; insertions at one place in the order they were made. Joined once (a file of
    # thousands of fixes rebuilt the text once per edit).
    ordered = sorted(range(len(chosen)), key=lambda i: (chosen[i][0], chosen[i][1], i))
    pieces, done = [], 0
    for start, end, new_text in (chosen[i] for i in ordered):
        pieces += [text[done:start], new_text]
        done = max(done, end)
    return "".join([*pieces, text[done:]]), applied


def _clashes(span: tuple[int, int, str], by_start: list[tuple[int, int]]) -> bool:
    """Whether `span` overlaps one of the chosen spans (pairwise apart, sorted by start): the one
    before it that is not an insertion, and those starting inside it."""
    index = bisect.bisect_left(by_start, (span[0], span[0]))
    before = next((s for s in reversed(by_start[:index]) if s[0] != s[1]), None)
    if before is not None and _overlaps(span, (*before, "")):
        return True
    for other in by_start[index:]:
        if other[0] > span[1]:
            return False
        if _overlaps(span, (*other, "")):
            return True
    return False


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # insertions conflict only strictly inside another edit
        return b[0] < a[0] < b[1] or a[0] < b[0] < a[1]
    return a[0] < b[1] and b[0] < a[1]
