"""Data-driven rule fixtures: `tests/fixtures/<CODE>/<case>.py`, expectations written in the file.

A line that should carry a diagnostic ends with `# expect: CODE[, CODE]`; every other line must
carry none. A first-line comment `# graphmend-settings: key=value` sets options for the case.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, with_recorded_run

from graphmend.api import Settings, check_source
from graphmend.rules import RULES_BY_CODE

EXPECT = re.compile(r"expect:\s*(GM\d{3}(?:\s*,\s*GM\d{3})*)")
SETTINGS = re.compile(r"#\s*graphmend-settings:\s*(.+)")
CASES = sorted(p for p in FIXTURES.glob("GM*/*.py") if not p.name.endswith((".in.py", ".out.py")))


def expected(text: str) -> set[tuple[int, str]]:
    found: set[tuple[int, str]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((number, code.strip()) for code in match.group(1).split(","))
    return found


def settings_of(text: str) -> Settings:
    match = SETTINGS.match(text)
    if not match:
        return Settings()
    overrides = {}
    for pair in match.group(1).split(","):
        key, _, value = pair.strip().partition("=")
        overrides[key] = (
            value.lower() == "true"
            if value.lower() in ("true", "false")
            else value.split("+")
            if "+" in value
            else value
        )
    return Settings().merged(overrides)


def test_there_are_enough_cases_for_every_code() -> None:
    assert len(CASES) >= 40
    for code in RULES_BY_CODE:
        folder = FIXTURES / code
        assert any(folder.glob("*.py")), f"no fixture for {code}"
        positives = [p for p in folder.glob("*.py") if (code in p.read_text())]
        assert positives, f"no positive fixture for {code}"


@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture(case: Path, tmp_path: Path) -> None:
    """A GM5xx case is checked as the `check` pipeline does: its recorded run is in the analysis."""
    text = case.read_text(encoding="utf-8")
    path = with_recorded_run(case, tmp_path)
    diagnostics = check_source(text, path, settings_of(text))
    got = {(d.range.start.line + 1, d.code) for d in diagnostics}
    assert got == expected(text)
    if case.stem.startswith("neg_"):
        assert not got


def test_a_disabled_call_points_at_the_decorator() -> None:
    """GM314 names the function and links its `disable` decorator (related kind "cause"), so the
    editor jumps from the call to the workaround; the `disable(f)(x)` form has no such place."""
    case = FIXTURES / "GM314" / "disabled_calls.py"
    text = case.read_text(encoding="utf-8")
    lines = text.splitlines()
    causes = {
        d.range.start.line + 1: [lines[r.range.start.line].strip() for r in d.related if r.kind == "cause"]
        for d in check_source(text, case)
        if d.code == "GM314"
    }
    assert causes == {
        35: ["@torch.compiler.disable"],
        36: ["@torch._dynamo.disable(recursive=False)"],
        37: ["@torch.compiler.disable"],
        39: [],
    }
