"""docs/coverage.md classifies every graph-break type of the installed torch's registry.

A new type in a future torch fails `test_every_registry_type_is_classified` until a row says what
graphmend does with it; a rule that starts linking another gb page fails
`test_rules_named_are_the_rules_that_link_the_page` until the table says so. That each page a rule
links is the one Dynamo reports is proved on the corpus by tests/test_dynamo_agreement.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT

from graphmend.rules import RULES, RULES_BY_CODE

torch = pytest.importorskip("torch")

COVERAGE = ROOT / "docs" / "coverage.md"
STATUSES = {"gap", "runtime", "internal"}
CELL = re.compile(r"(?<!\\)\|")


LATER = "<!-- torch 2.14.1 -->"  # the rows that change for torch 2.14.1 follow this mark
GONE_IN_2_14 = {"GB0060"}


def _rows(text: str) -> dict[str, tuple[str, str, str]]:
    rows: dict[str, tuple[str, str, str]] = {}
    for line in text.splitlines():
        if not line.startswith("| GB"):
            continue
        cells = [c.strip().replace("\\|", "|") for c in CELL.split(line)[1:-1]]
        assert len(cells) == 4, line
        assert cells[0] not in rows, f"{cells[0]} is classified twice"
        rows[cells[0]] = (cells[1], cells[2], cells[3])
    return rows


def classified(release: tuple[int, int] | None = None) -> dict[str, tuple[str, str, str]]:
    """gb id → (type, graphmend column, note) for a torch release (default: the installed one):
    torch 2.13.0's table, with 2.14.1's rows added and its removed types dropped from 2.14 on."""
    text = COVERAGE.read_text(encoding="utf-8")
    older, _, later = text.partition(LATER)
    rows = _rows(older)
    major, minor = (int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if (release or (major, minor)) >= (2, 14):
        rows = {gb: row for gb, row in rows.items() if gb not in GONE_IN_2_14} | _rows(later)
    return rows


def test_the_2_14_rows_are_new_or_renamed_types() -> None:
    """Under 2.13.0 the 2.14.1 section can only be checked for form: new ids, or ids it renames."""
    older, later = classified((2, 13)), classified((2, 14))
    added = set(later) - set(older)
    assert len(added) == 45 and set(older) - set(later) == GONE_IN_2_14
    renamed = {gb for gb in set(later) & set(older) if later[gb] != older[gb]}
    assert renamed == {"GB2483", "GB6053", "GB9648"}
    for gb in added | renamed:
        assert later[gb][1] in STATUSES and later[gb][2], gb


def registry() -> dict[str, str]:
    path = Path(torch.__file__).parent / "_dynamo" / "graph_break_registry.json"
    return {
        gb: " ".join(entries[0]["Gb_type"].split())
        for gb, entries in json.loads(path.read_text(encoding="utf-8")).items()
    }


def rule_codes(column: str) -> list[str]:
    return [c.strip() for c in column.split(",")] if column.startswith("GM") else []


def test_every_registry_type_is_classified() -> None:
    table, types = classified(), registry()
    assert sorted(table) == sorted(types), (
        f"unclassified: {sorted(set(types) - set(table))}; no longer in torch: {sorted(set(table) - set(types))}"
    )
    for gb, (gb_type, column, note) in table.items():
        assert gb_type == types[gb], f"{gb}: the table says {gb_type!r}, torch says {types[gb]!r}"
        assert column in STATUSES or all(code in RULES_BY_CODE for code in rule_codes(column)), f"{gb}: {column!r}"
        assert note, f"{gb}: every row says why, or which idiom"


def test_rules_named_are_the_rules_that_link_the_page() -> None:
    named = {(code, gb.lower()) for gb, (_, column, _) in classified((2, 13)).items() for code in rule_codes(column)}
    linked = {(rule.code, gb) for rule in RULES for gb in rule.reason_ids()}
    assert named == linked


def test_numpy_table_is_dynamos_own_map() -> None:
    """GM311's table is the NumPy functions missing from Dynamo's NumPy-to-torch map, as installed:
    a torch that implements one more (or a NumPy that adds one) fails here until the table follows."""
    import importlib
    import inspect

    from torch._dynamo.variables.misc import get_np_to_tnp_map

    from graphmend.torch_api import NUMPY_UNSUPPORTED

    traced = {id(function) for function in get_np_to_tnp_map()}
    missing = set()
    for name in ("numpy", "numpy.random", "numpy.linalg", "numpy.fft"):
        module = importlib.import_module(name)
        for attribute in dir(module):
            value = getattr(module, attribute)
            if (
                attribute.startswith("_")
                or attribute == "test"
                or not callable(value)
                or inspect.isclass(value)
                or inspect.ismodule(value)
            ):
                continue
            if id(value) not in traced:
                missing.add(f"{name}.{attribute}")
    assert NUMPY_UNSUPPORTED == missing
