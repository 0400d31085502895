"""Jupyter notebooks in the CLI (issue 15, item 1): code cells analysed as one module, IPython syntax
masked, findings at cell and line, fixes written back keeping everything else in the file."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import run

from graphmend import api

IMPORTS = (
    "%matplotlib inline\nimport logging\nimport torch\nfrom torch import nn\n\nlogger = logging.getLogger(__name__)"
)
MODEL = """class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x + 1
        logger.info("gated")
        return y"""
COMPILE = "model = torch.compile(Gate(), backend=COUNTER)\nout = [model(torch.ones(3)), model(-torch.ones(3))]"
SHELL = "!pip list | grep torch\nfiles = !ls\n%time 1 + 1\nGate?"


def notebook(*cells: str, **write: object) -> str:
    """A notebook of these cells (markdown when a cell starts with `#md `), as the JSON nbformat writes."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for text in cells:
        if text.startswith("#md "):
            nb.cells.append(nbformat.v4.new_markdown_cell(text[4:]))
        else:
            cell = nbformat.v4.new_code_cell(text, execution_count=len(nb.cells))
            cell.outputs = [nbformat.v4.new_output("stream", text=f"ran cell {len(nb.cells)}\n")]
            nb.cells.append(cell)
    return nbformat.writes(nb, **write)


@pytest.fixture()
def work(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cells_are_one_module_and_findings_point_at_cell_and_line(work: Path, capsys) -> None:
    (work / "nb.ipynb").write_text(notebook("#md # A model", IMPORTS, SHELL, MODEL, COMPILE))
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", "nb.ipynb")
    assert code == 1
    assert out.splitlines() == [
        "nb.ipynb:cell 4:3:12: GM101 [*] This `if` tests a tensor value; select with `torch.where` instead",
        "nb.ipynb:cell 4:7:9: GM202 This logging call breaks the graph; defer it until after the compiled region",
        "Found 2 graph breaks in 1 file.",
        "[*] 1 fixable with `--fix` (1 more with `--unsafe-fixes`).",
    ]
    items = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", "nb.ipynb")[1])
    assert [(i["cell"], i["line"], i["column"]) for i in items] == [(4, 3, 12), (4, 7, 9)]
    # the source line shown is the cell's
    assert "3 |         if x.sum() > 0:" in run(capsys, "check", "--no-cache", "nb.ipynb")[1]


def test_a_name_from_another_cell_is_known(work: Path, capsys) -> None:
    """`torch` imported as `th` in cell 1 makes `th.compile` in cell 3 a compile site."""
    cells = [
        "import torch as th",
        "def step(x):\n    if x.max() > 1:\n        x = x / 2\n    return x",
        "fast = th.compile(step)",
    ]
    (work / "nb.ipynb").write_text(notebook(*cells))
    items = json.loads(
        run(capsys, "check", "--no-module-forward", "--no-cache", "--output-format", "json", "nb.ipynb")[1]
    )
    assert [(i["code"], i["cell"], i["line"]) for i in items] == [("GM101", 2, 2)]


def test_ipython_syntax_is_masked_and_a_broken_cell_leaves_the_others_analysed(work: Path, capsys) -> None:
    cells = [IMPORTS, SHELL, "%%bash\necho $((1 + 2))\nif [ 1 ]; then echo x; fi", "def broken(:\n    pass", MODEL]
    (work / "nb.ipynb").write_text(notebook(*cells))
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", "nb.ipynb")
    lines = out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in lines[:-2]] == ["GM001", "GM101", "GM202"]
    assert lines[0].startswith("nb.ipynb:cell 4:1:") and "cannot analyse this cell" in lines[0]
    assert lines[-2] == "Found 2 graph breaks and 1 notebook cell that could not be analysed in 1 file."


def test_fix_writes_only_the_changed_cells_back(work: Path, capsys) -> None:
    text = notebook("#md # A model", IMPORTS, SHELL, MODEL, COMPILE)
    target = work / "nb.ipynb"
    target.write_text(text)
    code, out, _ = run(capsys, "fix", "--unsafe-fixes", "nb.ipynb")
    assert code == 0 and "nb.ipynb: fixed 2 graph breaks" in out
    before, after = json.loads(text), json.loads(target.read_text())
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [1, 3]  # the imports cell (the deferred logger) and the model cell
    for a, b in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert {k: v for k, v in before.items() if k != "cells"} == {k: v for k, v in after.items() if k != "cells"}
    model = "".join(after["cells"][3]["source"])
    assert "torch.where" in model and '_deferred_logger_info("gated")' in model
    assert "".join(after["cells"][1]["source"]).startswith("%matplotlib inline\n")  # the magic is back
    assert "".join(after["cells"][2]["source"]) == SHELL
    nbformat.validate(nbformat.reads(target.read_text(), as_version=4))
    # the file's layout is nbformat's own: writing the parsed JSON back with nbformat changes nothing
    assert target.read_text() == nbformat.writes(nbformat.reads(target.read_text(), as_version=4))
    # and a second fix leaves the bytes as they are
    data = target.read_bytes()
    assert run(capsys, "fix", "--unsafe-fixes", "nb.ipynb")[0] == 0
    assert target.read_bytes() == data


def test_fix_keeps_a_foreign_json_layout(work: Path, capsys) -> None:
    """A notebook written with two-space indentation and escaped non-ASCII keeps both."""
    raw = json.loads(
        notebook(
            "# café\nimport torch",
            "@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x = x + x\n    return x.relu()",
        )
    )
    text = json.dumps(raw, indent=2, ensure_ascii=True)
    target = work / "nb.ipynb"
    target.write_text(text)
    assert run(capsys, "fix", "nb.ipynb")[0] == 0
    fixed = target.read_text()
    assert "torch.where" in fixed and "caf\\u00e9" in fixed and fixed.startswith('{\n  "cells"')
    assert fixed == json.dumps(json.loads(fixed), indent=2, ensure_ascii=True)  # same layout, no final newline


def test_a_notebook_with_nothing_to_fix_keeps_its_bytes(work: Path, capsys) -> None:
    target = work / "nb.ipynb"
    target.write_text(notebook(IMPORTS, "x = torch.ones(2)"))
    data = target.read_bytes()
    assert run(capsys, "fix", "nb.ipynb")[0] == 0
    assert target.read_bytes() == data


def test_fixed_notebook_code_runs_in_one_graph_with_the_same_outputs(work: Path, capsys) -> None:
    """The proof: the notebook's cells executed before and after the fix, under real Dynamo."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    target = work / "nb.ipynb"
    target.write_text(notebook(IMPORTS, MODEL, COMPILE))

    def execute() -> tuple[int, list]:
        torch._dynamo.reset()
        counter = CompileCounter()
        namespace: dict = {"COUNTER": counter, "__name__": "notebook"}
        for cell in api.read_notebook(target).raw["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code":
                exec("\n".join(line for line in source.splitlines() if not line.startswith("%")), namespace)
        return counter.frame_count, namespace["out"]

    graphs_before, out_before = execute()
    assert run(capsys, "fix", "--unsafe-fixes", "nb.ipynb")[0] == 0
    graphs_after, out_after = execute()
    assert graphs_before > 1 and graphs_after == 1
    assert all(torch.equal(a, b) for a, b in zip(out_before, out_after))


def test_directories_pick_up_notebooks_and_exclude_applies(work: Path, capsys) -> None:
    (work / "pyproject.toml").write_text('[tool.graphmend]\nextend-exclude = ["scratch"]\n')
    for name in ("a.ipynb", "scratch/b.ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(notebook(IMPORTS, MODEL))
    items = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", ".")[1])
    assert {i["path"] for i in items} == {"a.ipynb"}


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not a notebook: invalid JSON"),
        ('{"cells": []}', "not a notebook: no `nbformat` version"),
        ("\x00\x01", "not a notebook"),
    ],
)
def test_unreadable_notebooks_are_skipped_with_a_warning(work: Path, capsys, content: str, message: str) -> None:
    (work / "bad.ipynb").write_text(content)
    (work / "good.ipynb").write_text(notebook(IMPORTS, MODEL))
    code, out, err = run(capsys, "check", "--no-cache", "--output-format", "concise", ".")
    assert code == 1 and "good.ipynb:cell 2:3:12: GM101" in out
    assert f"graphmend: warning: bad.ipynb: {message}" in err


def test_version_3_notebooks_are_checked_and_not_fixed(work: Path, capsys) -> None:
    v4 = nbformat.reads(
        notebook(IMPORTS, "@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x = x + x\n    return x.relu()"),
        as_version=4,
    )
    target = work / "old.ipynb"
    target.write_text(nbformat.writes(nbformat.v3.convert.downgrade(v4), version=3))
    data = target.read_bytes()
    items = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", "old.ipynb")[1])
    assert [(i["code"], i["cell"], i["line"]) for i in items] == [("GM101", 2, 3)]
    code, _, err = run(capsys, "fix", "old.ipynb")
    assert "version 3 notebook is checked, not fixed" in err and target.read_bytes() == data


def test_stdin_notebook(work: Path, capsys, monkeypatch) -> None:
    text = notebook(IMPORTS, MODEL)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    out = run(capsys, "check", "-", "--stdin-filename", "nb.ipynb", "--output-format", "concise")[1]
    assert out.startswith("nb.ipynb:cell 2:3:12: GM101")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(capsys, "fix", "-", "--stdin-filename", "nb.ipynb", "--unsafe-fixes")
    assert code == 0 and "torch.where" in "".join(json.loads(out)["cells"][1]["source"])


def test_fix_diff_of_a_notebook_shows_its_cells(work: Path, capsys) -> None:
    target = work / "nb.ipynb"
    target.write_text(notebook(IMPORTS, MODEL))
    data = target.read_bytes()
    code, out, _ = run(capsys, "fix", "--diff", "nb.ipynb")
    assert code == 1 and target.read_bytes() == data
    assert out.startswith("--- a/nb.ipynb:cell 2\n+++ b/nb.ipynb:cell 2\n")
    assert "-        if x.sum() > 0:\n" in out and "+        y = torch.where(cond, y_if, y_else)\n" in out
    assert '"source"' not in out  # the cells' code, not the JSON


def test_stdin_notebook_that_is_not_utf8_is_a_clear_error(work: Path, capsys, monkeypatch) -> None:
    data = notebook(IMPORTS, MODEL).encode().replace(b"gated", b"gat\xe9d")  # latin-1 bytes in a cell
    for command in ("check", "fix"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        code, out, err = run(capsys, command, "-", "--stdin-filename", "nb.ipynb")
        assert code == 2 and out == "" and "not a notebook: not valid utf-8" in err  # never a replaced character


def test_github_and_sarif_point_at_the_lines_of_the_ipynb(work: Path, capsys) -> None:
    """A notebook finding in GitHub annotations and SARIF is on the line of the `.ipynb` file that
    holds its cell's line (nbformat writes one JSON string per source line), not a cell-relative
    line against the whole file, and not without a line."""
    text = notebook("#md # A model", IMPORTS, SHELL, MODEL, COMPILE)
    (work / "nb.ipynb").write_text(text)
    stored = text.splitlines()
    cell_line = MODEL.splitlines()[2]  # GM101's line, cell 4 line 3
    [expected] = [number for number, line in enumerate(stored, 1) if json.dumps(cell_line + "\n") in line]
    github = run(capsys, "check", "--no-cache", "--output-format", "github", "nb.ipynb")[1].splitlines()
    assert github[0].startswith(f"::warning file=nb.ipynb,title=graphmend (GM101),line={expected},endLine={expected}::")
    sarif = json.loads(run(capsys, "check", "--no-cache", "--output-format", "sarif", "nb.ipynb")[1])
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": expected, "endLine": expected}
