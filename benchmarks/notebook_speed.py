"""What checking a notebook costs against checking the same code as a `.py` file (issue 15).

    python benchmarks/notebook_speed.py [FILE ...]   (default: transformers 4.49.0's longformer, t5, phi3, bart)

Each file is turned into a notebook the way people write one: one code cell per top-level
statement run (imports together, each class or function its own cell), a markdown cell before each
class, and a short stream output under every code cell; nbformat writes it. Both are checked through
`pipelines.check_file` (read, parse the notebook with nbformat, mask, analyse, place findings in cells),
interleaved (py, notebook, py, ...) so machine noise hits both alike. Goal: notebook / py <= 1.5.
"""

from __future__ import annotations

import argparse
import ast
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat

from graphmend import api
from graphmend.pipelines import check_file


def default_files() -> list[Path]:
    import transformers  # only to locate its installed sources; nothing is imported from them

    models = Path(transformers.__file__).parent / "models"
    return [
        models / name
        for name in (
            "longformer/modeling_longformer.py",
            "t5/modeling_t5.py",
            "phi3/modeling_phi3.py",
            "bart/modeling_bart.py",
        )
    ]


def as_notebook(text: str) -> str:
    """The module's top-level statements as cells: consecutive simple statements share one."""
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    cells: list[nbformat.NotebookNode] = []
    group: list[str] = []

    def flush() -> None:
        if group:
            cell = nbformat.v4.new_code_cell("".join(group).strip("\n"))
            cell.outputs = [nbformat.v4.new_output("stream", text="done\n")]
            cells.append(cell)
            group.clear()

    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        source = lines[start : node.end_lineno]
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            flush()
            if isinstance(node, ast.ClassDef):
                cells.append(nbformat.v4.new_markdown_cell(f"## `{node.name}`"))
            group.extend(source)
            flush()
        else:
            group.extend(source)
    flush()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = cells
    return nbformat.writes(notebook)


def measure(path: Path, repeat: int, work: Path) -> tuple[float, float, int]:
    text = api.read_source(path)
    py = work / path.name
    py.write_text(text, encoding="utf-8")
    notebook = work / f"{path.stem}.ipynb"
    notebook.write_text(as_notebook(text), encoding="utf-8")
    settings = api.settings_for(work)
    py_findings = check_file(py, settings).diagnostics
    notebook_findings = check_file(notebook, settings).diagnostics
    assert len(py_findings) == len(notebook_findings), (path, len(py_findings), len(notebook_findings))
    py_times, notebook_times = [], []
    for _ in range(repeat):
        py_times.append(_timed(api.check_file, py, settings))
        notebook_times.append(_timed(api.check_file, notebook, settings))
    return statistics.median(py_times) * 1000, statistics.median(notebook_times) * 1000, len(py_findings)


def _timed(function: Any, *args: Any) -> float:
    """One call's wall time, with a collection before and none during (as analysis_speed.py)."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        function(*args)
        return time.perf_counter() - started
    finally:
        gc.enable()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    files = args.files or default_files()
    print(f"python {sys.version.split()[0]}, nbformat {nbformat.__version__}, repeat {args.repeat}")
    print(f"{'file':<28} {'findings':>8} {'.py ms':>8} {'.ipynb ms':>10} {'ratio':>6}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for path in files:
            py_ms, notebook_ms, findings = measure(path, args.repeat, Path(folder))
            ratio = notebook_ms / py_ms
            worst = max(worst, ratio)
            print(f"{path.name:<28} {findings:>8} {py_ms:>8.1f} {notebook_ms:>10.1f} {ratio:>6.2f}")
    print(f"worst ratio {worst:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
