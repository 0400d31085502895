"""Unified diffs in time near linear in the file: what `fix --diff` and the editor's diff show.

difflib's matcher looks for the longest match among every pair of alike lines: on a file of
thousands of alike functions (`x = x * 2` in each, fixed alike) that took 12.6 s of a 4,000-function
`fix --diff` (issue 68). Lines that occur once on each side anchor the two texts (patience diff:
the longest run of them in the same order on both sides); between anchors the stretches are short,
and difflib aligns each as before. A text of fewer lines than `_SMALL` is diffed by difflib whole, so
the diffs of everyday files are the ones difflib gives.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence

# Texts up to this many lines on each side are matched by difflib alone (its result, unchanged);
# in a longer one, stretches between anchors up to `_STRETCH` lines.
_SMALL = 2000
_STRETCH = 200


def unified_diff(before: Sequence[str], after: Sequence[str], fromfile: str, tofile: str) -> Iterator[str]:
    """`difflib.unified_diff(before, after, fromfile, tofile)`'s lines (3 lines of context), from
    the anchored matcher."""
    started = False
    for group in _AnchoredMatcher(before, after).get_grouped_opcodes(3):
        if not started:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
            started = True
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in before[i1:i2])
                continue
            yield from ("-" + line for line in before[i1:i2])
            yield from ("+" + line for line in after[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk's `start,length` as unified diffs write it (a length of 1 left out; an empty range
    named by the line before it)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


class _AnchoredMatcher(difflib.SequenceMatcher[str]):
    """A SequenceMatcher whose matching blocks come from unique-line anchors on long texts."""

    def __init__(self, before: Sequence[str], after: Sequence[str]) -> None:
        super().__init__(None, before, after)
        self._before, self._after = before, after
        self._blocks: list[difflib.Match] | None = None

    def get_matching_blocks(self) -> list[difflib.Match]:
        if max(len(self._before), len(self._after)) <= _SMALL:
            return super().get_matching_blocks()
        if self._blocks is None:
            self._blocks = _merged(_matches(self._before, self._after), len(self._before), len(self._after))
        return self._blocks


def _matches(before: Sequence[str], after: Sequence[str]) -> list[tuple[int, int, int]]:
    """Matching runs (i, j, size), in order, for the whole texts."""
    found: list[tuple[int, int, int]] = []
    stack = [(0, len(before), 0, len(after))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and before[alo] == after[blo]:  # a common start
            found.append((alo, blo, 1))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and before[ahi - 1] == after[bhi - 1]:  # a common end
            found.append((ahi - 1, bhi - 1, 1))
            ahi, bhi = ahi - 1, bhi - 1
        if alo == ahi or blo == bhi:
            continue
        anchors = [] if max(ahi - alo, bhi - blo) <= _STRETCH else _anchors(before, after, alo, ahi, blo, bhi)
        if not anchors:
            matcher = difflib.SequenceMatcher(None, before[alo:ahi], after[blo:bhi])
            found += [(alo + i, blo + j, size) for i, j, size in matcher.get_matching_blocks() if size]
            continue
        previous_i, previous_j = alo, blo
        for i, j in anchors:
            found.append((i, j, 1))
            stack.append((previous_i, i, previous_j, j))
            previous_i, previous_j = i + 1, j + 1
        stack.append((previous_i, ahi, previous_j, bhi))
    return sorted(found)


def _anchors(
    before: Sequence[str], after: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """The lines that occur once in each stretch, paired, as the longest run in the same order on
    both sides (patience sorting)."""
    in_before = Counter(before[alo:ahi])
    in_after = Counter(after[blo:bhi])
    where = {line: j for j, line in enumerate(after[blo:bhi], start=blo) if in_after[line] == 1}
    pairs = [
        (i, where[line]) for i, line in enumerate(before[alo:ahi], start=alo) if in_before[line] == 1 and line in where
    ]
    tails: list[int] = []  # the smallest last `j` of a run of each length
    tail_index: list[int] = []  # which pair ends it
    previous: list[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        length = bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[length] = j
            tail_index[length] = index
        previous[index] = tail_index[length - 1] if length else -1
    run: list[tuple[int, int]] = []
    index = tail_index[-1] if tail_index else -1
    while index != -1:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def _merged(found: list[tuple[int, int, int]], before: int, after: int) -> list[difflib.Match]:
    """Adjacent runs joined, with the closing (len, len, 0) block difflib's callers expect."""
    blocks: list[difflib.Match] = []
    for i, j, size in found:
        if blocks and blocks[-1].a + blocks[-1].size == i and blocks[-1].b + blocks[-1].size == j:
            last = blocks[-1]
            blocks[-1] = difflib.Match(last.a, last.b, last.size + size)
        else:
            blocks.append(difflib.Match(i, j, size))
    blocks.append(difflib.Match(before, after, 0))
    return blocks
