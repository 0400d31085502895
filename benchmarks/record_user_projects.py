"""The recorder against Dynamo's graph_breaks log on the user programs of `user_projects.py` (issue 41).

    python benchmarks/record_user_projects.py --site SITE [--programs A,B] [--json OUT]

SITE is the folder of unzipped library wheels that `user_projects.py` describes. Each program runs
once, exactly as `user_projects.py` runs it (its worker: eager under `sys.settrace`, then the compiled
model in eval and in training with Dynamo's graph_breaks log captured), under `graphmend record`
(the CLI, its recorder in the worker's process through its sitecustomize). Per program: Dynamo's
break sites (the innermost user frame of each logged break: a line of the program or of a library)
against the recorder's (the innermost frame of each recorded break), and where each recorded break
is placed (`runs.placed` with the program's folder as the project): at a line of the program, with
the library's line as the related frame when the break is in a library; and what `check` then
shows (issue 53): each program is copied alone into a project of its own and recorded there, so
that `check` finds the run, and the library lines named in its findings' `related` are scored
against Dynamo's break sites in the libraries. Printed: recall and precision of distinct sites and
of library lines in `related`, and a row per program.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from user_projects import PROGRAMS, Site, _short, measure

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))


def named_in_check(program: Path, site: Path) -> tuple[set[Site], set[Site]]:
    """What `check` shows of the newest run of the project at `program` (the run placed in the
    file, as a user sees it): the library lines named in the findings' `related` where the run broke
    the graph (kind "recorded"; a recompile's library line is not a break site), and the program's
    lines with a finding the run met."""
    from graphmend import api

    (result,) = api.check_paths([program], jobs=1)
    library, lines = set(), set()
    for diagnostic in result.diagnostics:
        if diagnostic.data.run is None:
            continue
        lines.add((os.path.realpath(program), diagnostic.range.start.line + 1))
        for related in diagnostic.related:
            if related.kind == "recorded" and related.path is not None and "broke the graph" in related.message:
                library.add((os.path.realpath(related.path), related.range.start.line + 1))
    return library, lines


def recorded(run: Path, program: Path) -> dict[str, Any]:
    """The run's break sites (the innermost frame of each break), and its breaks not placed at a line
    of `program` with the site as the related frame (for a break in the program: the site itself)."""
    from graphmend import api
    from graphmend.record.runs import placed

    sites: set[Site] = set()
    misplaced = []
    breaks = [e for e in api.read_run(run).events if e.kind == "graph_break" and e.frames]
    for event in breaks:
        innermost = event.frames[-1]
        site = (os.path.realpath(innermost["path"]), int(innermost["line"]))
        sites.add(site)
        user, related = placed(event, program.parent)
        at_program = user is not None and os.path.realpath(user["path"]) == os.path.realpath(program)
        if not at_program or related is not (None if site[0] == os.path.realpath(program) else innermost):
            misplaced.append({"site": site, "frames": event.frames})
    return {"sites": sites, "events": len(breaks), "misplaced": misplaced}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, required=True, help="folder of the unzipped library wheels")
    parser.add_argument("--programs", help="comma-separated subset of benchmarks/user_projects/*.py")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "server"), os.environ.get("PYTHONPATH")]))
    names = args.programs.split(",") if args.programs else sorted(p.stem for p in PROGRAMS.glob("*.py"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="graphmend-record-user-") as scratch:
        for name in names:
            alone = Path(scratch) / name  # the program alone as its project: the run kept where `check` finds it
            alone.mkdir()
            (alone / "pyproject.toml").write_text("[project]\nname = 'user-program'\n")
            program = Path(shutil.copy(PROGRAMS / f"{name}.py", alone / f"{name}.py"))
            run = alone / ".graphmend" / "runs" / "20261128-000000-1"
            wrapper = (sys.executable, "-m", "graphmend", "record", "--out", str(run), "--")
            record = measure(program, args.site, Path(scratch) / f"{name}.json", args.timeout, wrapper)
            if "failed" in record:
                print(f"{name}: failed: {record['failed']}", flush=True)
                rows.append({"program": name, "failed": record["failed"]})
                continue
            dynamo = {(path, line) for path, line in record["sites"] + record["other_sites"]}
            found = recorded(run, program)
            library, shown = named_in_check(program, args.site)
            in_libraries = {s for s in dynamo if s[0] != os.path.realpath(program)}
            row = {
                "library_truth": sorted(in_libraries),
                "library_named": sorted(library),
                "lines_shown": sorted(shown),
                "program": name,
                "dynamo": sorted(dynamo),
                "recorded": sorted(found["sites"]),
                "misses": sorted(dynamo - found["sites"]),
                "extras": sorted(found["sites"] - dynamo),
                "events": found["events"],
                "misplaced": found["misplaced"],
                "error": record["error"],
            }
            rows.append(row)
            print(f"{name}: {len(dynamo & found['sites'])}/{len(dynamo)} sites, {len(row['extras'])} extra", flush=True)
    scored = [r for r in rows if "failed" not in r]
    truth, found_total = sum(len(r["dynamo"]) for r in scored), sum(len(r["recorded"]) for r in scored)
    hits = sum(len(r["dynamo"]) - len(r["misses"]) for r in scored)
    events, misplaced = sum(r["events"] for r in scored), sum(len(r["misplaced"]) for r in scored)
    print(
        f"\nrecall {hits}/{truth} = {hits / max(truth, 1):.2f}; precision {hits}/{found_total} = "
        f"{hits / max(found_total, 1):.2f}; breaks placed at the program's line {events - misplaced}/{events}"
    )
    lib_truth = sum(len(r["library_truth"]) for r in scored)
    lib_named = sum(len(r["library_named"]) for r in scored)
    lib_hits = sum(len(set(map(tuple, r["library_truth"])) & set(map(tuple, r["library_named"]))) for r in scored)
    print(
        f"library break lines named in `check`'s related: recall {lib_hits}/{lib_truth} = "
        f"{lib_hits / max(lib_truth, 1):.2f}; precision {lib_hits}/{lib_named} = {lib_hits / max(lib_named, 1):.2f}\n"
    )
    print(
        "| program | Dynamo sites | recorded | breaks placed at the program's line | library lines: Dynamo / in `related` | misses / extras |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        if "failed" in r:
            print(f"| {r['program']} | failed: {r['failed']} | | | | |")
            continue
        odd = [f"missed {_short(s, args.site)}" for s in r["misses"]]
        odd += [f"extra {_short(s, args.site)}" for s in r["extras"]]
        placed = f"{r['events'] - len(r['misplaced'])}/{r['events']}"
        in_dynamo, in_related = set(map(tuple, r["library_truth"])), set(map(tuple, r["library_named"]))
        odd += [f"not in related {_short(s, args.site)}" for s in sorted(in_dynamo - in_related)]
        odd += [f"related only {_short(s, args.site)}" for s in sorted(in_related - in_dynamo)]
        libraries = f"{len(in_dynamo)} / {len(in_dynamo & in_related)}"
        print(
            f"| {r['program']} | {len(r['dynamo'])} | {len(r['recorded'])} | {placed} | {libraries} | {', '.join(odd) or '—'} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
