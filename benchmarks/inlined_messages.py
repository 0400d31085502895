"""Messages where Dynamo inlines the function that writes them (issue 50), per torch release.

    python -m venv /tmp/t291 && /tmp/t291/bin/pip install torch==2.9.1 numpy
    python -m venv /tmp/t214 && /tmp/t214/bin/pip install torch==2.14.1 numpy
    python benchmarks/inlined_messages.py /tmp/t291/bin/python .venv/bin/python /tmp/t214/bin/python [--json OUT]

A module whose forward prints, logs (a `%` format and an f-string) and warns runs in four places:
compiled itself (`frame`), as a submodule of a compiled `nn.Sequential` (`sequential`), through a
subclass's `super().forward()` (`super`), and under `torch.utils.checkpoint` inside a compiled step
(`checkpoint`). Each place runs three ways: the original eagerly (what a user sees without
torch.compile, the reference), and compiled under the eager, aot_eager and inductor backends, two
calls each, in eval under `no_grad` (training prints a tensor's `grad_fn`, which the in-graph forms
do not show under aot_eager and inductor: named by their hazard). Four programs: the original, its
fix as graphmend writes it for that release (`--torch-version`: the ordered-effect operator from
2.13, else the deferral), the operator form whatever the release (what the gate rests on), and the
deferral (the fix for torch 2.8, whose messages Dynamo replays after the graph). Per release, program, place and backend: whether every call wrote the
reference's messages (text, level, order), and the graph breaks (a `fullgraph=True` compile).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

PROGRAM = """import logging
import warnings

import torch
from torch import nn

logger = logging.getLogger("inlined_messages")


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor):
        y = self.lin(x) * 2
        print("sum", y.sum())
        logger.warning("max %s", y.max())
        logger.info(f"mean {y.mean():.3f}")
        warnings.warn("inner")
        return y


class Child(Inner):
    def forward(self, x: torch.Tensor):
        return super().forward(x) + 1
"""

PLACES = ("frame", "sequential", "super", "checkpoint")
BACKENDS = ("eager", "aot_eager", "inductor")


def worker(program: Path, place: str, out: Path) -> None:
    """In the release's environment: each way's messages per call, and whether fullgraph held."""
    import importlib.util
    import logging
    import warnings

    import torch

    spec = importlib.util.spec_from_file_location("inlined_program", program)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["inlined_program"] = module  # Dynamo imports a traced function's module by name
    spec.loader.exec_module(module)
    records: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(f"log {record.levelname} {record.getMessage()} @{record.funcName}:{record.lineno}")

    logger = logging.getLogger("inlined_messages")
    logger.addHandler(Handler())
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        if place == "frame":
            return module.Inner()
        if place == "sequential":
            return torch.nn.Sequential(module.Inner(), torch.nn.ReLU())
        if place == "super":
            return module.Child()
        inner = module.Inner()

        class Step(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.utils.checkpoint.checkpoint(self.inner, x, use_reentrant=False).relu()

        return Step()

    def calls(run: object, x: torch.Tensor) -> list[list[str]]:
        seen = []
        for _ in range(2):
            records.clear()
            stream = io.StringIO()
            with contextlib.redirect_stdout(stream), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with torch.no_grad():
                    run(x)
            lines = [f"print {line}" for line in stream.getvalue().splitlines()]
            mine = [w for w in caught if w.filename == str(program)]  # not torch's own (Dynamo's, TorchScript's)
            seen.append(lines + records + [f"warning {w.category.__name__} {w.message}" for w in mine])
        return seen

    x = torch.ones(2, 3)
    result: dict[str, object] = {"torch": torch.__version__, "reference": calls(build(), x)}
    for backend in BACKENDS:
        torch._dynamo.reset()
        try:
            compiled = calls(torch.compile(build(), backend=backend, fullgraph=True), x)
            result[backend] = {"fullgraph": True, "calls": compiled}
        except Exception as error:  # noqa: BLE001 - a break under fullgraph: measured without it
            torch._dynamo.reset()
            compiled = calls(torch.compile(build(), backend=backend), x)
            result[backend] = {"fullgraph": False, "calls": compiled, "break": type(error).__name__}
    out.write_text(json.dumps(result))


def _program(kind: str, release: tuple[int, int], folder: Path) -> Path:
    from graphmend.api import Settings, fix_source

    path = folder / f"{kind}.py"
    path.write_text(PROGRAM, encoding="utf-8")
    if kind != "original":
        version = {"fixed": release, "operator": (2, 14), "deferred": (2, 8)}[kind]
        settings = Settings(torch_version=version)
        path.write_text(fix_source(PROGRAM, path, unsafe=True, settings=settings).fixed, encoding="utf-8")
    return path


def _strip_sites(lines: list[str]) -> list[str]:
    return [line.split(" @")[0] for line in lines]


def measure(python: str) -> dict[str, object]:
    version = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    release = tuple(int(part) for part in version.split("+")[0].split(".")[:2])
    table: dict[str, object] = {"torch": version}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for kind in ("original", "fixed", "operator", "deferred"):
            program = _program(kind, release, folder)
            for place in PLACES:
                out = folder / f"{kind}-{place}.json"
                done = subprocess.run(
                    [python, __file__, "--worker", str(program), place, str(out)],
                    capture_output=True,
                    text=True,
                    check=False,
                    env={**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"},
                )
                if not out.exists():
                    table[f"{kind}/{place}"] = {"error": done.stderr.strip().splitlines()[-1:]}
                    continue
                seen = json.loads(out.read_text())
                row = {}
                for backend in BACKENDS:
                    measured = seen[backend]
                    reference = _strip_sites(seen["reference"][0])
                    same = all(_strip_sites(call) == reference for call in measured["calls"])
                    row[backend] = {
                        "same": same,
                        "fullgraph": measured["fullgraph"],
                        "calls": [] if same else measured["calls"],
                        "reference": [] if same else seen["reference"][0],
                    }
                table[f"{kind}/{place}"] = row
    return table


def print_table(results: list[dict[str, object]]) -> None:
    """One row per release, program and place: each backend's messages and graphs."""
    print("| torch | program | place | eager | aot_eager | inductor |")
    print("|---|---|---|---|---|---|")
    for result in results:
        for key, row in result.items():
            if key == "torch":
                continue
            kind, place = key.split("/")
            if "error" in row:
                print(f"| {result['torch']} | {kind} | {place} | error: {row['error']} | | |")
                continue
            cells = []
            for backend in BACKENDS:
                cell = row[backend]
                words = "same messages" if cell["same"] else "**differ**"
                cells.append(f"{words}, {'1 graph' if cell['fullgraph'] else 'breaks'}")
            print(f"| {result['torch']} | {kind} | {place} | {' | '.join(cells)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pythons", nargs="*", help="interpreters, one per torch release")
    parser.add_argument("--worker", nargs=3, metavar=("PROGRAM", "PLACE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()
    if args.worker:
        program, place, out = args.worker
        worker(Path(program), place, Path(out))
        return
    results = [measure(python) for python in args.pythons]
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
