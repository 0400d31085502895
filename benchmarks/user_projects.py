"""graphmend against real Dynamo on user programs that call library code from compiled code (issue 31, item 5).

    pip download --no-deps torchmetrics==1.7.4 lightning-utilities==0.14.3 pytorch-metric-learning==2.8.1 \\
        kornia==0.8.1 kornia_rs==0.1.9 torch_geometric==2.6.1 nnAudio==0.3.3 psutil fsspec jinja2 markupsafe \\
        pyparsing scipy -d WHEELS
    for w in WHEELS/*.whl; do unzip -q -o $w -d SITE; done       # unzipped, never installed
    python benchmarks/user_projects.py --site SITE [--programs A,B] [--json OUT]

Each program in `benchmarks/user_projects/` is written the way users write models (an unannotated
`forward`, `torch.compile(model)` at module level, `inputs()` giving the batches) and calls a library
from compiled code: metrics (torchmetrics), metric-learning losses and miners, vision augmentation and
filters (kornia), graph layers and utilities (torch_geometric), audio front ends (nnAudio),
transformers' layers and helpers (the installed 4.49.0). In a fresh process per program, with SITE first on `sys.path`:
1. the eager model runs in eval (no_grad) and in training (forward and backward) under `sys.settrace`,
   which records the lines run in the program and in SITE's and transformers' files;
2. the compiled model runs the same way and Dynamo's graph_breaks log gives the break sites (the
   innermost user frame of each break: a line of the program or of a library).
graphmend checks the program (alone, as its own project) with `follow-libraries` on and `library-paths = [SITE]`: a finding in the
program counts at its lines, a finding reported at a call counts at its library line. Recall: of
Dynamo's break sites in the program and the libraries, those graphmend names; precision: of
graphmend's findings whose line ran, those where Dynamo broke. Then `graphmend fix --unsafe-fixes` on a
copy of the program, and its graphs are counted again (libraries unchanged).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from harness import trace_lines

PROGRAMS = Path(__file__).resolve().parent / "user_projects"
Site = tuple[str, int]  # (real path, 1-based line)


# ---------------------------------------------------------------- the worker (one program, one process)


def _under(roots: tuple[str, ...], path: str) -> str | None:
    real = os.path.realpath(path)
    return real if real.startswith(roots) else None


def _run(model: Any, batches: list[tuple[Any, ...]]) -> None:
    """Every batch in eval (no_grad), then in training with a backward of the first output."""
    import torch

    for training in (False, True):
        model.train(training)
        for batch in batches:
            torch.manual_seed(0)
            with torch.set_grad_enabled(training):
                out = model(*batch)
            first = out[0] if isinstance(out, (tuple, list)) else out
            if training and isinstance(first, torch.Tensor) and first.requires_grad:
                first.float().sum().backward()


def load(program: Path, site: Path) -> Any:
    """The program imported as a module, with SITE's libraries first on the path."""
    sys.path.insert(0, str(site))
    spec = importlib.util.spec_from_file_location(program.stem, program)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[program.stem] = module
    spec.loader.exec_module(module)
    return module


def worker(program: Path, site: Path, out: Path) -> None:
    import logging

    import torch
    import transformers

    module = load(program, site)
    compiled, batches = module.model, module.inputs()
    eager = compiled._orig_mod
    roots = (
        str(program.parent.resolve()),
        os.path.realpath(site),
        os.path.realpath(Path(transformers.__file__).parent),
    )
    executed: dict[str, set[int]] = {}
    sys.settrace(partial(trace_lines, partial(_under, roots), executed))
    try:
        _run(eager, batches)
    finally:
        sys.settrace(None)
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    torch._logging.set_logs(graph_breaks=True)
    breaks_logger = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
    breaks_logger.addHandler(Collect())
    breaks_logger.propagate = False
    torch._dynamo.utils.graph_break_dup_warning_checker.maxsize = 0  # every record keeps its site
    error = None
    try:
        _run(compiled, batches)
    except Exception as failure:  # a program Dynamo cannot run is reported, not fatal
        error = f"{type(failure).__name__}: {str(failure).splitlines()[0][:200] if str(failure) else ''}"
    sites = sorted(
        {
            (os.path.realpath(m.group(1)), int(m.group(2)))
            for message in messages
            if (m := re.search(r"in user code at (\S+):(\d+)", message))
        }
    )
    record = {
        "sites": [[path, line] for path, line in sites if path.startswith(roots)],
        "other_sites": [[path, line] for path, line in sites if not path.startswith(roots)],
        "executed": {path: sorted(lines) for path, lines in executed.items()},
        "graphs": int(torch._dynamo.utils.counters["stats"]["unique_graphs"]),
        "error": error,
    }
    out.write_text(json.dumps(record))


# ---------------------------------------------------------------- the driver


def measure(program: Path, site: Path, out: Path, timeout: float, wrapper: tuple[str, ...] = ()) -> dict[str, Any]:
    """The worker's record for `program`, run in a fresh process (under `wrapper`, a command prefix
    such as `graphmend record --out RUN --`, when given)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [*wrapper, sys.executable, __file__, "--worker", str(program), str(site), str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if done.returncode != 0 or not out.exists():
        return {"failed": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(out.read_text())


def graphmend_sites(program: Path, site: Path) -> list[tuple[Site, Site, str, str]]:
    """Each finding as (where it counts, where it is reported, code, message): a finding reported at a
    call counts at its library line. The program is checked alone, as the project it stands for (in
    place, the other programs beside it would be its project too, and their calls would count)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from graphmend import api

    with tempfile.TemporaryDirectory(prefix="graphmend-user-project-") as alone:
        copy = Path(alone) / program.name
        shutil.copy(program, copy)
        overrides = {"follow_libraries": True, "library_paths": (str(site),)}
        [result] = api.check_paths([copy], overrides=overrides, jobs=1)
    found = []
    for diagnostic in result.diagnostics:
        reported = (os.path.realpath(program), diagnostic.range.start.line + 1)
        library = diagnostic.data.library
        counts = (os.path.realpath(library.path), library.line + 1) if library is not None else reported
        found.append((counts, reported, diagnostic.code, diagnostic.message))
    return found


def score(name: str, record: dict[str, Any], found: list[tuple[Site, Site, str, str]]) -> dict[str, Any]:
    dynamo = {(path, line) for path, line in record["sites"]}
    executed = {path: set(lines) for path, lines in record["executed"].items()}
    named = {counts for counts, _, _, _ in found}
    ran = {counts for counts in named if counts[1] in executed.get(counts[0], set())}
    return {
        "program": name,
        "dynamo_sites": sorted(dynamo),
        "graphmend_sites": sorted(named),
        "hits": sorted(dynamo & named),
        "misses": sorted(dynamo - named),
        "unconfirmed": sorted(ran - dynamo),
        "not_run": sorted(named - ran),
        "graphs": record["graphs"],
        "error": record.get("error"),
    }


def fixed_graphs(program: Path, site: Path, work: Path, timeout: float) -> int | None:
    copy = work / "fixed" / program.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(program, copy)
    subprocess.run([sys.executable, "-m", "graphmend", "fix", "--unsafe-fixes", str(copy)], capture_output=True)
    record = measure(copy, site, work / f"{program.stem}.fixed.json", timeout)
    return record.get("graphs")


def _short(site: Site, site_root: Path) -> str:
    path = site[0]
    for root in (str(PROGRAMS), os.path.realpath(site_root)):
        if path.startswith(root):
            path = os.path.relpath(path, root)
    if "/transformers/" in path:
        path = "transformers/" + path.split("/transformers/")[-1]
    return f"{path}:{site[1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, help="folder of the unzipped library wheels")
    parser.add_argument("--programs", help="comma-separated subset of benchmarks/user_projects/*.py")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.worker[0]).resolve(), Path(args.worker[1]), Path(args.worker[2]))
        return 0
    if args.site is None:
        parser.error("--site is required")
    names = args.programs.split(",") if args.programs else sorted(p.stem for p in PROGRAMS.glob("*.py"))
    work = Path(tempfile.mkdtemp(prefix="graphmend-user-projects-"))
    rows = []
    for name in names:
        program = PROGRAMS / f"{name}.py"
        record = measure(program, args.site, work / f"{name}.json", args.timeout)
        if "failed" in record:
            rows.append({"program": name, "failed": record["failed"]})
            print(f"{name}: failed: {record['failed']}", flush=True)
            continue
        row = score(name, record, graphmend_sites(program, args.site))
        row["fixed_graphs"] = fixed_graphs(program, args.site, work, args.timeout)
        rows.append(row)
        print(
            f"{name}: {len(row['hits'])}/{len(row['dynamo_sites'])} found, {len(row['unconfirmed'])} unconfirmed",
            flush=True,
        )
    scored = [r for r in rows if "failed" not in r]
    sites = sum(len(r["dynamo_sites"]) for r in scored)
    hits = sum(len(r["hits"]) for r in scored)
    ran = sum(len(r["hits"]) + len(r["unconfirmed"]) for r in scored)
    print(
        f"\nrecall {hits}/{sites} = {hits / sites if sites else 1:.2f}; precision {hits}/{ran} = {hits / ran if ran else 1:.2f}\n"
    )
    print("| program | Dynamo break sites | found | missed | unconfirmed (ran) | not run | graphs before → after fix |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "failed" in r:
            print(f"| {r['program']} | failed: {r['failed']} | | | | | |")
            continue
        cell = lambda items: ", ".join(_short(s, args.site) for s in items) or "—"  # noqa: E731
        print(
            f"| {r['program']} | {len(r['dynamo_sites'])} | {len(r['hits'])} | {cell(r['misses'])} | "
            f"{cell(r['unconfirmed'])} | {len(r['not_run'])} | {r['graphs']} → {r['fixed_graphs']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
