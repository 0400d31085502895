"""Documentation that mirrors code: the README's purity table is the table the rewrites use."""

from __future__ import annotations

import re

from graphmend.analysis.purity import PURITY_TABLE

from conftest import ROOT

TABLE = re.compile(r"<!-- purity-table:[^>]*-->\n(.*?)\n<!-- end purity-table -->", re.DOTALL)


def test_readme_purity_table_is_the_code_table() -> None:
    match = TABLE.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md lost its purity table markers"
    rows = [line for line in match.group(1).splitlines()[2:] if line.strip()]
    documented = [tuple(cell.strip() for cell in row.strip().strip("|").split(" | ")) for row in rows]
    assert documented == [tuple(row) for row in PURITY_TABLE]
