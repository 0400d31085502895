"""`graphmend.text_diff`: the unified diffs `fix --diff` and the editor's diff command print.

Everyday files get difflib's own diff, line for line; a long file of alike functions (where difflib
took 12.6 s of a 4,000-function `fix --diff`, issue 68) gets a diff anchored on its unique lines,
which must still turn the original into the fixed text exactly.
"""

from __future__ import annotations

import difflib
import random
import re

import pytest

from graphmend.text_diff import unified_diff

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _patched(before: list[str], diff: list[str]) -> list[str]:
    """`before` with the unified diff applied (as `patch` would), checking each context line."""
    assert diff[0].startswith("--- ") and diff[1].startswith("+++ ")
    result: list[str] = []
    done = 0
    index = 2
    while index < len(diff):
        match = _HUNK.fullmatch(diff[index].rstrip("\n"))
        assert match is not None, diff[index]
        start, length = int(match.group(1)), int(match.group(2) or 1)
        first = start - 1 if length else start
        assert first >= done, "hunks out of order"
        result += before[done:first]
        done = first
        index += 1
        while index < len(diff) and not diff[index].startswith("@@"):
            sign, line = diff[index][0], diff[index][1:]
            if sign in " -":
                assert before[done] == line, f"line {done + 1} differs from the hunk's"
                done += 1
            if sign in " +":
                result.append(line)
            index += 1
    return result + before[done:]


def _edited(lines: list[str], rng: random.Random, edits: int) -> list[str]:
    edited = list(lines)
    for _ in range(edits):
        position = rng.randrange(len(edited) + 1)
        kind = rng.random()
        if kind < 0.4 or not edited:
            edited.insert(position, rng.choice(["a\n", "new\n", "    h = x * 2\n"]))
        elif kind < 0.7:
            del edited[min(position, len(edited) - 1)]
        else:
            edited[min(position, len(edited) - 1)] = f"changed {position}\n"
    return edited


@pytest.mark.parametrize("seed", range(200))
def test_an_everyday_file_gets_difflibs_diff(seed: int) -> None:
    rng = random.Random(seed)
    before = [rng.choice(["a\n", "b\n", "    return x\n", "x = 1\n", ""]) or "y\n" for _ in range(rng.randrange(80))]
    after = _edited(before, rng, rng.randrange(8))
    assert list(unified_diff(before, after, "a/f.py", "b/f.py")) == list(
        difflib.unified_diff(before, after, "a/f.py", "b/f.py")
    )


@pytest.mark.parametrize("seed", range(20))
def test_a_long_file_gets_a_diff_that_makes_the_fixed_text(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randrange(2001, 6000)
    before = [
        f"line {rng.randrange(size)}\n" if rng.random() < 0.5 else rng.choice(["a\n", "    return x\n"])
        for _ in range(size)
    ]
    after = _edited(before, rng, rng.randrange(1, 300))
    assert _patched(before, list(unified_diff(before, after, "a/f.py", "b/f.py"))) == after


def test_thousands_of_alike_functions_fixed_alike() -> None:
    """The shape of the issue: each function's `if` rewritten the same way."""
    before: list[str] = []
    after: list[str] = []
    for number in range(1500):
        head = ["@torch.compile\n", f"def f{number}(x):\n"]
        before += [*head, f"    if x.sum() > {number}:\n", "        x = x * 2\n", "    return x\n", "\n"]
        after += [
            *head,
            f"    cond = x.sum() > {number}\n",
            "    x = torch.where(cond, x * 2, x)\n",
            "    return x\n",
            "\n",
        ]
    diff = list(unified_diff(before, after, "a/big.py", "b/big.py"))
    assert _patched(before, diff) == after
    assert sum(line.startswith("-") for line in diff[2:]) == 3000  # the two `if` lines of each function


def test_a_file_of_one_repeated_line_with_no_anchor() -> None:
    before = ["a\n"] * 3000
    after = ["a\n"] * 2990 + ["b\n"] * 20
    assert _patched(before, list(unified_diff(before, after, "a", "b"))) == after


def test_no_change_gives_no_diff() -> None:
    lines = [f"{n}\n" for n in range(2500)]
    assert list(unified_diff(lines, list(lines), "a", "b")) == []
