"""The recorder against Dynamo's own graph_breaks log, on every program of the Dynamo corpus (issue 41).

    python benchmarks/record_truth.py [--json OUT]

Each program of `tests/dynamo_corpus/` (and each package of `tests/dynamo_projects/`, whose breaks are
in modules other than the compiled one) runs in this process under torch (`dynamo_harness.measure`:
its entry on inputs that take every branch, Dynamo's graph_breaks text log captured) while
`graphmend.recording()` records the same run from the structured trace. Per program: the lines of
the program where the log attributes a break, the lines where the recorder places one (the
innermost frame in the program's file), and the corpus's `# dynamo: break` marks. Printed: recall
and precision of the recorder's distinct break lines against the log's and against the marks, and
every program where they differ.

    python benchmarks/record_truth.py --recompiles

Each program of `benchmarks/record_recompiles/` runs in this process under `graphmend.recording()`;
printed per program: the lines where the recorder places its recompiles (`runs.placed`, the
program's folder as the project) against its `# recompile` marks, with the library's line when the
guard was made in one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests")]


def recorded_lines(run: Path, program: Path) -> set[int]:
    from graphmend import api

    lines = set()
    for event in api.read_run(run).events:
        if event.kind != "graph_break":
            continue
        inside = [f for f in event.frames if Path(f["path"]).resolve() == program]
        if inside:
            lines.add(inside[-1]["line"])
    return lines


def recorded_project_sites(run: Path, folder: Path) -> set[tuple[str, int]]:
    """(file relative to the project, line) of the innermost frame in the project of each break."""
    from graphmend import api

    sites = set()
    for event in api.read_run(run).events:
        if event.kind != "graph_break":
            continue
        inside = []
        for frame in event.frames:
            try:
                inside.append((Path(frame["path"]).resolve().relative_to(folder).as_posix(), frame["line"]))
            except ValueError:
                continue
        if inside:
            sites.add(inside[-1])
    return sites


def recompiles() -> int:
    """The recompile programs' placed lines against their marks; 1 when any differs."""
    import runpy

    import torch

    import graphmend
    from graphmend import api
    from graphmend.record.runs import placed

    differ = 0
    with tempfile.TemporaryDirectory(prefix="graphmend-recompiles-") as scratch:
        for program in sorted((ROOT / "benchmarks" / "record_recompiles").glob("*.py")):
            marks = [n for n, text in enumerate(program.read_text().splitlines(), 1) if text.endswith("# recompile")]
            torch._dynamo.reset()
            with graphmend.recording(Path(scratch) / program.stem) as run:
                runpy.run_path(str(program), run_name="__main__")
            found = [(placed(e, program.parent), e) for e in api.read_run(run).events if e.kind == "recompile"]
            lines = sorted({user["line"] for (user, _), _ in found if user is not None})
            differ += lines != marks or len(lines) != len(found)
            print(f"{program.name}: marks {marks}, recompiles placed at:")
            for (user, library), event in found:
                guard = f" (guard at {library['path']}:{library['line']})" if library else ""
                print(f"  {user['line'] if user else None}{guard}, met {event.count}x: {event.reason}")
    return int(differ > 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--recompiles", action="store_true", help="the recompile programs instead of the corpus")
    args = parser.parse_args()
    if args.recompiles:
        return recompiles()
    from dynamo_harness import (
        corpus_files,
        expected_break_lines,
        expected_project_breaks,
        measure,
        measure_project,
        project_folders,
    )

    import graphmend

    rows = []
    with tempfile.TemporaryDirectory(prefix="graphmend-truth-") as scratch:
        for number, program in enumerate(corpus_files()):  # one file each
            program = program.resolve()
            with graphmend.recording(Path(scratch) / str(number)) as run:
                breaks, _ = measure(program)
            rows.append(
                {
                    "program": program.name,
                    "log": sorted({b.line for b in breaks}),
                    "recorded": sorted(recorded_lines(run, program)),
                    "marks": sorted(expected_break_lines(program)),
                }
            )
        for number, folder in enumerate(project_folders()):  # packages whose breaks are in other modules
            folder = folder.resolve()
            with graphmend.recording(Path(scratch) / f"project{number}") as run:
                project_breaks, _ = measure_project(folder)
            rows.append(
                {
                    "program": folder.name + "/",
                    "log": sorted({(b.file, b.line) for b in project_breaks}),
                    "recorded": sorted(recorded_project_sites(run, folder)),
                    "marks": sorted(expected_project_breaks(folder)),
                }
            )
    totals = {}
    for reference in ("log", "marks"):
        truth = sum(len(r[reference]) for r in rows)
        found = sum(len(r["recorded"]) for r in rows)
        hits = sum(len(set(r[reference]) & set(r["recorded"])) for r in rows)  # lines, or (file, line)
        totals[reference] = (hits, truth, found)
        print(
            f"against the {reference}: recall {hits}/{truth} = {hits / max(truth, 1):.3f}, "
            f"precision {hits}/{found} = {hits / max(found, 1):.3f}"
        )
    for row in rows:
        if row["recorded"] != row["log"] or row["recorded"] != row["marks"]:
            print(f"  {row['program']}: log {row['log']} recorded {row['recorded']} marks {row['marks']}")
    print(f"{len(rows)} programs (the corpus's files and its multi-module projects)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "totals": totals}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
