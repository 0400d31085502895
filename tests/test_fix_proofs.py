"""Proof that rewrites are right: every corpus program, fixed with --unsafe-fixes, runs through
real Dynamo (torch 2.13.0) with no fixable break left, the same outputs on inputs taking every
branch, the same gradients after backward, and the same prints, log records and warnings in the
same order. Then where users run (`where_users_run`): optimiser steps, graph and recompile counts,
inductor, torch.export, torch.jit.script, inference_mode with load_state_dict, warnings as errors.
A safe fix changes nothing there; an unsafe fix's hazards name every difference. Every safe
rewrite fixture (`tests/fixtures/GM*/fix_*.in.py`, its `ENTRY` on its `INPUTS`) runs the same way
against its expected rewrite.

Inductor compiles C++ per graph: CI runs it on `INDUCTOR_SAMPLE`; the full mode (`GRAPHMEND_FULL=1`)
runs it on every program. Likewise the contexts of the matrix that compile C++ or start processes
(`where_code_runs.EXPENSIVE`: DDP, inductor in training and eval, a warm inductor cache, a traced
module loaded in a fresh process) run in CI on `EXPENSIVE_CONTEXT_SAMPLE` only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dynamo_harness  # noqa: E402
import observations  # noqa: E402
import where_code_runs  # noqa: E402
import where_users_run  # noqa: E402
from conftest import FIXTURES, FULL  # noqa: E402

from graphmend.api import check_source, fix_source  # noqa: E402

PROGRAMS = [p for p in dynamo_harness.corpus_files() if p.name.startswith("pos_")]
FIXABLE = ("GM1", "GM2")
# Programs whose fixes move code into graphs inductor compiles differently: the loop that ran
# eagerly (random draws), a layer gate, a safe predicated fix, a deferral.
INDUCTOR_SAMPLE = {
    "pos_trust_loop_dropout",
    "pos_layerdrop_branch",
    "pos_figure1_sum_gt",
    "pos_module_forward",
    "pos_trust_overflow",
    "pos_print_fig5",
    "pos_loop_if",
}
# Rewrite fixtures whose fixes are safe: each says how it runs (ENTRY on INPUTS that take every branch).
SAFE_FIXTURES = [
    p
    for p in sorted(FIXTURES.glob("GM*/fix_*.in.py"))
    if not p.read_text(encoding="utf-8").startswith("# fix-applicability: unsafe")
]
FIXTURE_INDUCTOR_SAMPLE = {"fix_branch_temporaries", "fix_clamp_floating_on_every_path"}
# The context matrix (`where_code_runs`): every rewrite fixture that says how it runs, in CI; the
# corpus programs in CI only for this sample (`GRAPHMEND_FULL=1` runs every one).
RUNNABLE_FIXTURES = [
    p for p in sorted(FIXTURES.glob("GM*/fix_*.in.py")) if "\nENTRY = " in p.read_text(encoding="utf-8")
]
CONTEXT_SAMPLE = {
    "pos_figure1_sum_gt",
    "pos_module_forward",
    "pos_print_fig5",
    "pos_trust_overflow",
    "pos_layerdrop_branch",
    "pos_loop_if",
    "pos_logger_warning",
    "pos_transformers_warning_once",
    "pos_warnings_warn",
}
# Issue 67: where the expensive contexts run in CI. Predicated `if`s (a function, a module with
# parameters, so DDP and AdamW apply) and messages kept in the graph (a function's `warning_once`
# beside a predicated `if`; a module's `warning_once`, whose original the observation cache keeps).
EXPENSIVE_CONTEXT_SAMPLE = {
    "GM101/fix_if_else",
    "GM101/fix_clamp_floating_on_every_path",
    "GM101/fix_message_in_branch",
    "pos_transformers_warning_once",
}


def _contexts(name: str) -> tuple[str, ...]:
    """The contexts a program runs in: every one in the full mode or for the sample, else the cheap ones."""
    return where_code_runs.CONTEXTS if FULL or name in EXPENSIVE_CONTEXT_SAMPLE else where_code_runs.CHEAP


# The contexts of issue 50; those issue 67 added are asserted apart, after them.
ISSUE_50_CONTEXTS = where_code_runs.CONTEXTS[: where_code_runs.CONTEXTS.index("shapes") + 1]


def _assert_context_matrix(found: dict, hazards: list[str], safe: bool) -> None:
    """A safe fix changes nothing in any context, an unsafe fix's hazards name every difference: the
    contexts of issue 50 first, then those of issue 67."""
    left = where_code_runs.unnamed(found, hazards)
    for contexts in (ISSUE_50_CONTEXTS, tuple(c for c in where_code_runs.CONTEXTS if c not in ISSUE_50_CONTEXTS)):
        some = {context: kinds for context, kinds in found.items() if context in contexts}
        if safe:
            assert not some, f"a safe fix changes {some}"
        unnamed = {context: kinds for context, kinds in left.items() if context in contexts}
        assert not unnamed, f"no hazard names {unnamed} (of {some})"


def _same(a, b) -> bool:  # noqa: ANN001
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):  # NumPy programs return arrays
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return a == b


def _same_gradients(before: list, after: list, zero_for_none: bool) -> bool:
    """The same gradients, NaN only where the original has NaN; a zero gradient for a parameter
    that had none only when `zero_for_none`."""
    if len(before) != len(after):
        return False
    for old, new in zip(before, after):
        if len(old) != len(new):
            return False
        for a, b in zip(old, new):
            if (a is None) != (b is None):
                given = b if a is None else a
                if not (zero_for_none and a is None and bool((given == 0).all())):
                    return False
            elif a is not None and not _same(a, b):
                return False
    return True


@pytest.fixture(scope="module")
def mended(tmp_path_factory) -> dict[Path, dict]:
    folder = tmp_path_factory.mktemp("mended")
    results = {}
    for path in PROGRAMS:
        text = path.read_text(encoding="utf-8")
        fixed = fix_source(text, path, unsafe=True)
        target = folder / path.name
        target.write_text(fixed.fixed, encoding="utf-8")
        before = check_source(text, path)
        results[path] = {
            "fixed_path": target,
            "fixed_text": fixed.fixed,
            "applied": fixed.applied,
            "before": before,
            "remaining": [d for d in check_source(fixed.fixed, target)],
        }
    return results


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_rewrite_keeps_behaviour_and_removes_fixable_breaks(path: Path, mended) -> None:
    result = mended[path]
    fixed_path = result["fixed_path"]
    assert check_source(result["fixed_text"], fixed_path) == result["remaining"]
    # Idempotent: fixing the fixed program changes nothing.
    assert fix_source(result["fixed_text"], fixed_path, unsafe=True).fixed == result["fixed_text"]
    # Behaviour: outputs, gradients (NaN only where the original has NaN) and the ordered
    # prints/logs/warnings are identical. A parameter's zero gradient where the original gave none
    # is allowed only where the fix says so (optimisers treat the two differently).
    try:
        outputs_before, events_before, gradients_before = observations.of_original(
            dynamo_harness.run_observed_with_gradients, path
        )
    except Exception:  # the program changes its inputs in place (Dynamo raises its own error): no gradients
        outputs_before, events_before = observations.of_original(dynamo_harness.run_observed, path)
        outputs_after, events_after = dynamo_harness.run_observed(fixed_path)
    else:
        outputs_after, events_after, gradients_after = dynamo_harness.run_observed_with_gradients(fixed_path)
        announced = any("zero gradient instead of none" in d.fix.described for d in result["before"] if d.fix)
        assert _same_gradients(gradients_before, gradients_after, announced), "the gradients differ"
    assert _same(outputs_before, outputs_after)
    assert events_after == events_before
    # Breaks: what Dynamo still breaks on is exactly what graphmend still reports.
    breaks_after, _ = dynamo_harness.measure(fixed_path)
    remaining_lines = {line for line, _ in dynamo_harness.flagged(result["remaining"])}
    assert {b.line for b in breaks_after} == remaining_lines
    refused = [d for d in result["remaining"] if d.code.startswith(FIXABLE)]
    for diagnostic in refused:
        assert diagnostic.data.no_fix, "a fixable break was left without a reason"
    if not result["remaining"]:
        assert dynamo_harness.fullgraph_passes(fixed_path), "no break is reported, yet fullgraph=True fails"


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_rewrite_changes_nothing_unnamed_where_users_run(path: Path, mended) -> None:
    """A safe fix changes nothing where users run; an unsafe one names each difference found."""
    result = mended[path]
    if result["fixed_text"] == path.read_text(encoding="utf-8"):
        pytest.skip("nothing fixed")
    inductor = FULL or path.stem in INDUCTOR_SAMPLE
    found = where_users_run.differences(
        observations.of_original(where_users_run.observe, path, inductor),
        where_users_run.observe(result["fixed_path"], inductor),
    )
    hazards = [h for d in result["before"] if d.fix for h in d.fix.hazards]
    if not hazards:
        assert not found, f"a safe fix changes {found}"
    assert not where_users_run.unnamed(found, hazards), f"no hazard names {found}"


def test_mending_report(mended) -> None:
    """How many programs end at zero breaks, and every refusal with its reason."""
    with_fixable = [p for p, r in mended.items() if any(d.code.startswith(FIXABLE) for d in r["before"])]
    fully = [p for p in with_fixable if not [d for d in mended[p]["remaining"] if d.code.startswith(FIXABLE)]]
    refusals = sorted(
        f"{p.stem}:{d.range.start.line + 1} {d.code}: {d.data.no_fix}"
        for p, r in mended.items()
        for d in r["remaining"]
        if d.code.startswith(FIXABLE)
    )
    print(
        f"\n{len(fully)}/{len(with_fixable)} programs with fixable breaks are fully mended; "
        f"refusals:\n  " + "\n  ".join(refusals)
    )
    assert len(fully) >= len(with_fixable) - len(refusals)


WARNING_MODULE = """import warnings

import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            warnings.warn("positive input")
        return x * 2
"""


def test_in_graph_warning_keeps_the_users_file_and_line(tmp_path: Path) -> None:
    """The warning is issued for the user's file and module (issue 18), never at the helper's; kept
    in the graph (issue 50) it names the call's own line under torch.compile too, where a deferral
    named the compiled function's `def` line."""
    import importlib.util
    import warnings

    target = tmp_path / "warning_user.py"
    target.write_text(fix_source(WARNING_MODULE, target, unsafe=True).fixed, encoding="utf-8")
    lines = target.read_text(encoding="utf-8").splitlines()
    call_line = next(n for n, line in enumerate(lines, 1) if '"positive input"' in line and "def " not in line)
    spec = importlib.util.spec_from_file_location("warning_user", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Net()(torch.ones(2))
        torch.compile(module.Net(), backend="eager", fullgraph=True)(torch.ones(2))
    found = [(w.filename, w.lineno, w.category) for w in caught if str(w.message) == "positive input"]
    assert found == [(str(target), call_line, UserWarning), (str(target), call_line, UserWarning)]


@pytest.mark.parametrize(
    "case", SAFE_FIXTURES, ids=[f"{p.parent.name}/{p.name.removesuffix('.in.py')}" for p in SAFE_FIXTURES]
)
def test_safe_fixture_changes_nothing_where_users_run(case: Path, tmp_path: Path) -> None:
    """A safe rewrite fixture and its expected rewrite give the same outputs, gradients and messages
    on inputs that take every branch, and differ in nothing `where_users_run` sees."""
    text = case.read_text(encoding="utf-8")
    assert "\nENTRY = " in text and "\nINPUTS = " in text, "a safe fixture must say how it runs (ENTRY, INPUTS)"
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(text, encoding="utf-8")
    after.write_text(case.with_name(case.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8"))
    outputs_before, events_before, gradients_before = dynamo_harness.run_observed_with_gradients(before)
    outputs_after, events_after, gradients_after = dynamo_harness.run_observed_with_gradients(after)
    assert _same(outputs_before, outputs_after)
    assert _same_gradients(gradients_before, gradients_after, zero_for_none=False), "the gradients differ"
    assert events_after == events_before
    inductor = FULL or case.name.removesuffix(".in.py") in FIXTURE_INDUCTOR_SAMPLE
    found = where_users_run.differences(
        where_users_run.observe(before, inductor), where_users_run.observe(after, inductor)
    )
    assert not found, f"a safe fix changes {found}"


@pytest.mark.parametrize(
    "case", RUNNABLE_FIXTURES, ids=[f"{p.parent.name}/{p.name.removesuffix('.in.py')}" for p in RUNNABLE_FIXTURES]
)
def test_fixture_changes_nothing_unnamed_where_its_code_runs(case: Path, tmp_path: Path) -> None:
    """Issue 50: a rewrite fixture and its expected rewrite, run where their code may run (inlined
    as a submodule, an `nn.Sequential`, through `super()`, under `checkpoint`; under `no_grad`,
    `inference_mode`, fp16 and bf16 autocast; exported strict and not; with hooks; at other sizes;
    issue 67: on fake and meta tensors, under torch.func's grad and vmap, traced by symbolic_trace,
    with warnings as errors, trained by AdamW; and for the sample, under DDP, inductor, a warm
    inductor cache, a traced module loaded in a fresh process): a safe fix changes nothing, an
    unsafe fix's hazards name every difference."""
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    text = case.read_text(encoding="utf-8")
    before.write_text(text, encoding="utf-8")
    after.write_text(case.with_name(case.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8"))
    contexts = _contexts(f"{case.parent.name}/{case.name.removesuffix('.in.py')}")
    found = where_code_runs.differences(
        where_code_runs.observe(before, contexts), where_code_runs.observe(after, contexts)
    )
    hazards = [h for d in check_source(text, case) if d.fix for h in d.fix.hazards]
    _assert_context_matrix(found, hazards, safe=not text.startswith("# fix-applicability: unsafe"))


CONTEXT_PROGRAMS = [p for p in PROGRAMS if FULL or p.stem in CONTEXT_SAMPLE]


@pytest.mark.parametrize("path", CONTEXT_PROGRAMS, ids=[p.stem for p in CONTEXT_PROGRAMS])
def test_rewrite_changes_nothing_unnamed_where_its_code_runs(path: Path, mended) -> None:
    """Issue 50: each corpus program and its rewrite in the context matrix (a sample in CI,
    `GRAPHMEND_FULL=1` for all; the expensive contexts of issue 67 on `EXPENSIVE_CONTEXT_SAMPLE`):
    a safe fix changes nothing, an unsafe one names each difference."""
    result = mended[path]
    if result["fixed_text"] == path.read_text(encoding="utf-8"):
        pytest.skip("nothing fixed")
    contexts = _contexts(path.stem)
    found = where_code_runs.differences(
        observations.of_original(where_code_runs.observe, path, contexts),
        where_code_runs.observe(result["fixed_path"], contexts),
    )
    hazards = [h for d in result["before"] if d.fix for h in d.fix.hazards]
    _assert_context_matrix(found, hazards, safe=not hazards)
