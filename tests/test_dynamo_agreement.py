"""graphmend's flagged lines must equal the lines where real Dynamo (torch 2.13.0) breaks.

Each program in `tests/dynamo_corpus/` is compiled with backend="eager" and run on inputs that
take every branch; the graph_breaks log gives the ground truth. Negatives (`neg_*`) must compile to
one graph and get no diagnostic at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import dynamo_harness  # noqa: E402
import observations  # noqa: E402

from graphmend.api import check_source  # noqa: E402
from graphmend.rules import RULES  # noqa: E402

# One pytest-xdist worker runs the whole file: every corpus program under Dynamo, measured once for the module.
pytestmark = pytest.mark.xdist_group("test_dynamo_agreement")

PROGRAMS = dynamo_harness.corpus_files()
FIXABLE = ("GM1", "GM2")


@pytest.fixture(scope="module")
def measurements() -> dict[Path, tuple[set, list]]:
    """For every program: Dynamo's breaks, and graphmend's diagnostics."""
    return {
        path: (
            observations.of_original(dynamo_harness.measure, path)[0],
            check_source(path.read_text(encoding="utf-8"), path),
        )
        for path in PROGRAMS
    }


@pytest.fixture(scope="module")
def measured(measurements) -> dict[Path, tuple[set[int], set[tuple[int, str]]]]:
    """For every program: Dynamo's break lines, and graphmend's (line, code) pairs."""
    return {
        path: ({b.line for b in breaks}, dynamo_harness.flagged(diagnostics))
        for path, (breaks, diagnostics) in measurements.items()
    }


def test_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 30
    assert sum(p.name.startswith("neg_") for p in PROGRAMS) >= 10


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_flagged_lines_equal_dynamo_break_lines(path: Path, measured) -> None:
    dynamo_lines, diagnostics = measured[path]
    assert dynamo_lines == dynamo_harness.expected_break_lines(path), "corpus annotation is stale"
    assert {line for line, _ in diagnostics} == dynamo_lines
    if path.name.startswith("neg_"):
        assert not diagnostics


def test_reason_pages_are_dynamos_own(measurements) -> None:
    """Each diagnostic links the gb page Dynamo itself prints for that site."""
    mismatches = []
    for path, (breaks, diagnostics) in measurements.items():
        for d in diagnostics:
            pages = {b.reason_id for b in breaks if b.line == d.range.start.line + 1}
            if d.reason_id not in pages:
                mismatches.append(f"{path.name}:{d.range.start.line + 1} {d.code} {d.reason_id} not in {sorted(pages)}")
    assert not mismatches, "\n".join(mismatches)


def test_every_page_a_rule_links_is_seen_on_the_corpus(measurements) -> None:
    """The Dynamo proof of docs/coverage.md: each (rule, gb page) pair a rule can give is one some
    corpus program makes Dynamo report at a line that rule flags."""
    seen = {
        (d.code, d.reason_id)
        for breaks, diagnostics in measurements.values()
        for d in diagnostics
        if d.reason_id in {b.reason_id for b in breaks if b.line == d.range.start.line + 1}
    }
    claimed = {(rule.code, gb) for rule in RULES for gb in rule.reason_ids()}
    assert claimed <= seen, f"never seen with real Dynamo: {sorted(claimed - seen)}"


def test_recall_and_precision(measured, record_property) -> None:
    """Over the whole corpus, for the fixable categories and for all codes."""
    report = []
    for label, prefixes in (("fixable (GM1xx/GM2xx)", FIXABLE), ("all codes", ("GM",))):
        true_positive = false_positive = false_negative = 0
        for dynamo_lines, diagnostics in measured.values():
            flagged = {line for line, code in diagnostics if code.startswith(prefixes)}
            other = {line for line, code in diagnostics if not code.startswith(prefixes)}
            truth = dynamo_lines - other  # breaks of other categories are not this category's to find
            true_positive += len(flagged & truth)
            false_positive += len(flagged - truth)
            false_negative += len(truth - flagged)
        recall = true_positive / max(true_positive + false_negative, 1)
        precision = true_positive / max(true_positive + false_positive, 1)
        record_property(f"recall {label}", recall)
        record_property(f"precision {label}", precision)
        report.append(
            f"{label}: recall {recall:.3f} precision {precision:.3f} (tp={true_positive}, fp={false_positive}, fn={false_negative})"
        )
        assert recall == 1.0 and precision == 1.0, report[-1]
    print("\n" + "\n".join(report))
