"""Before/after fixtures for every rewrite shape and every refusal.

`tests/fixtures/<CODE>/fix_<case>.in.py` is fixed (with unsafe fixes when its first line says
`# fix-applicability: unsafe`) and must equal `fix_<case>.out.py`, parse, and stay unchanged when
fixed again; each `# hazard: <words>` comment must be among its fixes' hazards. `refuse_<case>.in.py` must stay unchanged even with unsafe fixes, and the line marked
`# no-fix: <words>` must give why there is no automatic fix (`data["no_fix"]`) in those words.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, with_recorded_run

from graphmend.api import check_source, fix_source
from graphmend.diagnostics import Applicability

FIX_CASES = sorted(FIXTURES.glob("GM*/fix_*.in.py"))
REFUSAL_CASES = sorted(FIXTURES.glob("GM*/refuse_*.in.py"))
UNSAFE = "# fix-applicability: unsafe"
NO_FIX = re.compile(r"no-fix:\s*(.+)$")
HAZARD = re.compile(r"# hazard:\s*(.+)$", re.MULTILINE)


def ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name.removesuffix('.in.py')}" for p in paths]


def test_every_fixable_code_has_rewrite_fixtures() -> None:
    assert {p.parent.name for p in FIX_CASES} >= {"GM101", "GM102", "GM201", "GM202", "GM203", "GM304"}
    assert len(FIX_CASES) >= 15 and len(REFUSAL_CASES) >= 8


@pytest.mark.parametrize("case", FIX_CASES, ids=ids(FIX_CASES))
def test_rewrite(case: Path, tmp_path: Path) -> None:
    """A GM5xx case is fixed with its recorded run in the analysis: the function the run shows
    compiled is analysed as compiled, and its static finding carries the fix."""
    before = case.read_text(encoding="utf-8")
    expected = case.with_name(case.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
    case = with_recorded_run(case, tmp_path)
    unsafe = before.startswith(UNSAFE)
    result = fix_source(before, case, unsafe=unsafe)
    assert result.error is None
    assert result.fixed == expected
    ast.parse(result.fixed)
    assert fix_source(result.fixed, case, unsafe=unsafe).fixed == result.fixed, "not idempotent"
    fixes = [d.fix for d in check_source(before, case) if d.fix is not None]
    kinds = {f.applicability for f in fixes}
    named = " ".join(h for f in fixes for h in f.hazards)
    for words in HAZARD.findall(before):
        assert words.strip() in named, f"no hazard names {words.strip()!r}"
    if unsafe:
        assert Applicability.UNSAFE in kinds
        assert fix_source(before, case, unsafe=False).fixed != expected, "an unsafe fix was applied by default"
    else:
        assert kinds == {Applicability.SAFE}


@pytest.mark.parametrize("case", REFUSAL_CASES, ids=ids(REFUSAL_CASES))
def test_refusal(case: Path) -> None:
    text = case.read_text(encoding="utf-8")
    assert fix_source(text, case, unsafe=True).fixed == text
    marked = {
        number: match.group(1).strip()
        for number, line in enumerate(text.splitlines())
        if (match := NO_FIX.search(line))
    }
    assert marked, "a refusal fixture must mark its line with `# no-fix: <reason words>`"
    diagnostics = {d.range.start.line: d for d in check_source(text, case)}
    for line, words in marked.items():
        diagnostic = diagnostics[line]
        assert diagnostic.fix is None
        assert words in (diagnostic.data.no_fix or "")
