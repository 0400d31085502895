"""Across modules, graphmend's flagged lines must equal the lines where real Dynamo breaks.

Each package in `tests/dynamo_projects/` is checked the way `graphmend check <folder>` does it
(the project model: calls, compile sites and base classes across its files), and run under
torch 2.13.0 (backend="eager") on inputs that take every branch; the graph_breaks log, attributed
to (file, line), is the truth. Negatives (`neg_*`) compile to one graph and get no diagnostic.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import dynamo_harness  # noqa: E402

from graphmend import api  # noqa: E402

# One pytest-xdist worker runs the whole file: every project under Dynamo, measured once for the module.
pytestmark = pytest.mark.xdist_group("test_dynamo_projects")

PROJECTS = dynamo_harness.project_folders()


@pytest.fixture(scope="module")
def measured() -> dict[Path, tuple[set[tuple[str, int]], int, set[tuple[str, int, str]]]]:
    """For every project: Dynamo's (file, line) breaks, its graphs, graphmend's (file, line, code)."""
    found = {}
    for folder in PROJECTS:
        breaks, graphs = dynamo_harness.measure_project(folder)
        results = api.check_paths([folder], jobs=1)
        assert not [r for r in results if r.error], "every file of the project is readable"
        flagged = {
            (r.path.relative_to(folder).as_posix(), d.range.start.line + 1, d.code)
            for r in results
            for d in r.diagnostics
        }
        found[folder] = ({(b.file, b.line) for b in breaks}, graphs, flagged)
    return found


def test_corpus_spans_modules() -> None:
    assert len(PROJECTS) >= 6
    assert any(p.name.startswith("neg_") for p in PROJECTS)
    for folder in PROJECTS:
        assert len(list(folder.rglob("*.py"))) >= 3, f"{folder.name} is not a multi-module program"


@pytest.mark.parametrize("folder", PROJECTS, ids=[p.name for p in PROJECTS])
def test_flagged_lines_equal_dynamo_break_lines_in_every_file(folder: Path, measured) -> None:
    dynamo, graphs, flagged = measured[folder]
    assert dynamo == dynamo_harness.expected_project_breaks(folder), "corpus annotation is stale"
    assert {(file, line) for file, line, _ in flagged} == dynamo
    if folder.name.startswith("neg_"):
        assert not flagged and graphs == 1
    else:
        assert any(file != "main.py" for file, _ in dynamo), "a positive program breaks outside its entry file"


def test_recall_and_precision(measured, record_property) -> None:
    true_positive = false_positive = false_negative = 0
    for dynamo, _, flagged in measured.values():
        lines = {(file, line) for file, line, _ in flagged}
        true_positive += len(lines & dynamo)
        false_positive += len(lines - dynamo)
        false_negative += len(dynamo - lines)
    recall = true_positive / max(true_positive + false_negative, 1)
    precision = true_positive / max(true_positive + false_positive, 1)
    record_property("recall", recall)
    record_property("precision", precision)
    print(
        f"\nmulti-module: recall {recall:.3f} precision {precision:.3f} (tp={true_positive}, fp={false_positive}, fn={false_negative})"
    )
    assert recall == 1.0 and precision == 1.0


def test_a_finding_in_a_callee_names_the_compiled_entry_in_the_other_file() -> None:
    folder = dynamo_harness.PROJECTS_DIR / "pos_helper_logging"
    (result,) = [r for r in api.check_paths([folder], jobs=1) if r.path.name == "checks.py"]
    related = {r.path and Path(r.path).name: r.message for d in result.diagnostics for r in d.related}
    assert related == {
        "model.py": "`check_padding` is reached from compiled `pos_helper_logging.model.Model.forward` "
        "in model.py (nn.Module.forward is treated as compiled) via `validate`"
    }


def _same(before: object, after: object) -> bool:
    if isinstance(before, torch.Tensor):
        return (
            isinstance(after, torch.Tensor)
            and before.shape == after.shape
            and before.dtype == after.dtype
            and torch.allclose(before, after, equal_nan=True)
        )
    if isinstance(before, (tuple, list)):
        return type(before) is type(after) and len(before) == len(after) and all(map(_same, before, after))
    return before == after


@pytest.mark.parametrize("folder", [p for p in PROJECTS if p.name.startswith("pos_")], ids=lambda p: p.name)
def test_fixing_the_project_removes_its_breaks_and_keeps_its_behaviour(folder: Path, tmp_path: Path) -> None:
    """`graphmend fix --unsafe-fixes` on a copy of the whole package (fixes in every file, in each
    file's project context): every break that is left is one graphmend still reports, and the
    program's results and printed/logged output are the same on inputs that take every branch."""
    # Its own package name: Dynamo keeps the first module object it imported under a name, so a
    # fixed copy of the same name, run in this process after the original, would be traced against
    # the original's globals (measured on torch 2.13: a helper the fix added was not found).
    fixed = tmp_path / f"{folder.name}_fixed"
    shutil.copytree(folder, fixed)
    run = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", str(fixed), "--unsafe-fixes"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr
    _, _, outputs_before, printed_before = dynamo_harness.run_project(folder)
    breaks, _, outputs_after, printed_after = dynamo_harness.run_project(fixed)
    remaining = {
        (r.path.relative_to(fixed).as_posix(), d.range.start.line + 1)
        for r in api.check_paths([fixed], jobs=1)
        for d in r.diagnostics
    }
    assert {(b.file, b.line) for b in breaks} == remaining
    assert all(map(_same, outputs_before, outputs_after)) and len(outputs_before) == len(outputs_after)
    assert printed_after == printed_before


def test_a_base_class_in_another_module_lends_its_buffers_to_the_fix() -> None:
    """modular_phi3.py:258's shape: the buffers the branches store are registered by the base's
    `__init__` in base.py, so the predicated rewrite (which stores on both paths) is offered."""
    folder = dynamo_harness.PROJECTS_DIR / "pos_inherited_buffer"
    (result,) = [r for r in api.check_paths([folder], jobs=1) if r.path.name == "model.py"]
    (diagnostic,) = result.diagnostics
    assert diagnostic.fix is not None, diagnostic.message
    alone = api.check_source((folder / "model.py").read_text(), None)  # without the project: base unknown
    assert all(d.fix is None for d in alone)


def test_a_parameter_compiled_callers_pass_a_tensor_is_a_tensor_whatever_its_annotation() -> None:
    """`modeling_rope_utils.py:155`'s shape: `seq_len: Optional[int]`, a tensor when the growth in
    another module calls it through `ROPE_INIT_FUNCTIONS[...]`, an int from other callers. Only the
    project knows; the rewrite keeps the original for a Python value."""
    folder = dynamo_harness.PROJECTS_DIR / "pos_rope_table"
    (result,) = [r for r in api.check_paths([folder], jobs=1) if r.path.name == "rope_utils.py"]
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "GM102" and diagnostic.fix is not None
    (edit,) = diagnostic.fix.edits
    assert edit.new_text.endswith(
        "if isinstance(seq_len, torch.Tensor) else (seq_len if seq_len is not None "
        "and seq_len > max_position_embeddings else max_position_embeddings)"
    )
    alone = api.check_source((folder / "rope_utils.py").read_text(), None)
    assert alone == [], "without the project, `seq_len` is the int its annotation says"


def test_an_if_on_a_parameter_only_some_callers_make_a_tensor_is_refused(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scales.py").write_text(
        "import torch\n\n\ndef scale(x, seq_len: int):\n    if seq_len > 4:\n        x = x * 2\n    return x\n"
    )
    (package / "model.py").write_text(
        "import torch\n\nfrom .scales import scale\n\n\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x, position_ids):\n"
        "        return scale(x, torch.max(position_ids) + 1)\n"
    )
    (result,) = [r for r in api.check_paths([package], jobs=1) if r.path.name == "scales.py"]
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "GM101" and diagnostic.fix is None
    assert "`seq_len` is a tensor only for some callers" in diagnostic.data.no_fix
