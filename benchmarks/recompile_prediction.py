"""Recompiles predicted from source (GM6xx) against the recompiles a recorded run meets (issue 55).

    python benchmarks/recompile_prediction.py [--json OUT]

Each program of `benchmarks/recompile_corpus/` is a training or serving loop written the way users
write them: those named `same_*` look like the others and do not recompile. Truth is the program's
recorded run: it runs in this process under `graphmend.recording()` (torch as installed, Dynamo's
cache reset before each), and a recompile's site is the line the recorder places it at (`runs.placed`:
the innermost frame in the program). Predicted sites are the lines of `graphmend check`'s GM6xx
findings on the same file. A `# recompile: <cause>` mark on a line names the cause a reader gives the
recompile recorded there (number, state, compile, mode, shape); a recorded site without a mark counts
as "unmarked".

Printed per cause: recall (recorded sites of that cause some rule predicts) and precision (sites the
cause's rule predicts that the run recorded); every recorded site no rule predicted, and every
prediction the run did not meet. Exit status 1 when any recorded site is unmarked or a mark is not
recorded (the corpus's marks are its documentation).

    python benchmarks/recompile_prediction.py --fixes [--corpus DIR]

Every GM6xx fix applied (`fix --unsafe-fixes`, GM6xx only) and each fixed program recorded again
beside its original: the recompiles at the fixed lines must be gone and the outputs (every tensor
and number left in the program's namespace, same seed) equal. Exit status 1 otherwise.

    python benchmarks/recompile_prediction.py --worker OUT

The recording half alone, as `torch_versions.py --recompiles` runs it in another release's environment.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "recompile_corpus"
sys.path[:0] = [str(ROOT / "server")]

CAUSE_OF_RULE = {"GM601": "number", "GM602": "state", "GM603": "compile", "GM604": "mode", "GM605": "shape"}
CAUSES = ("number", "state", "compile", "mode", "shape")


def programs() -> list[Path]:
    return sorted(CORPUS.glob("*.py"))


def use_corpus(folder: Path) -> None:
    """Score another folder of programs (one nobody here wrote) instead of the corpus."""
    global CORPUS
    CORPUS = folder.resolve()


def marks(program: Path) -> dict[int, str]:
    """line → the cause its `# recompile: <cause>` mark names."""
    return {
        number: text.rsplit("# recompile:", 1)[1].strip()
        for number, text in enumerate(program.read_text().splitlines(), 1)
        if "# recompile:" in text
    }


def record(program: Path, scratch: Path) -> list[dict]:
    """The recompiles of one run of `program`: line (None: no frame of the program), count, reason."""
    return [e for e in record_events(program, scratch) if e["kind"] == "recompile"]


def record_events(program: Path, scratch: Path) -> list[dict]:
    """Every event of one run of `program` (its kind, line, count, reason), Dynamo's cache reset first."""
    import runpy

    import torch

    import graphmend
    from graphmend import api
    from graphmend.record.runs import placed

    torch._dynamo.reset()
    with graphmend.recording(scratch / program.stem) as run:
        runpy.run_path(str(program), run_name="__main__")
    found = []
    for event in api.read_run(run).events:
        user, _ = placed(event, program.parent)
        found.append(
            {"kind": event.kind, "line": user["line"] if user else None, "count": event.count, "reason": event.reason}
        )
    return found


def reason_cause(reasons: list[str]) -> str:
    """The cause a reader gives a recorded recompile from Dynamo's words, for a folder of programs
    without marks (nobody here wrote them): the first guard's kind."""
    text = reasons[0] if reasons else ""
    if "size mismatch" in text or "rank mismatch" in text or "stride mismatch" in text:
        return "shape"
    if "GLOBAL_STATE" in text or "dtype mismatch" in text or "device mismatch" in text:
        return "mode"
    if "self." in text or ".training" in text or "_modules[" in text:
        return "state"
    return "number" if "==" in text else "unmarked"


def recorded_everywhere() -> dict:
    """Every corpus program's recorded recompiles, under the torch installed here."""
    import torch

    rows: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="graphmend-recompiles-") as scratch:
        for program in programs():
            try:
                rows[program.name] = {"recompiles": record(program, Path(scratch))}
            except Exception as error:  # noqa: BLE001 - a program this release cannot run is reported
                rows[program.name] = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
    return {"torch": torch.__version__, "programs": rows}


def predicted(program: Path, torch_version: str | None = None) -> dict[int, str]:
    """line → the GM6xx code graphmend predicts a recompile at (the lowest code where several)."""
    from graphmend import api
    from graphmend.settings import parse_torch_version

    settings = api.Settings(runs=False, torch_version=parse_torch_version(torch_version) if torch_version else None)
    found: dict[int, str] = {}
    for diagnostic in api.check_source(program.read_text(), program, settings):
        if diagnostic.code in CAUSE_OF_RULE:
            found.setdefault(diagnostic.range.start.line + 1, diagnostic.code)
    return found


def score(recorded: dict, torch_version: str | None = None) -> dict:
    """Per cause: recall and precision of the predicted sites against the recorded ones."""
    tally: dict[str, dict[str, int]] = {
        cause: {"recorded": 0, "found": 0, "predicted": 0, "met": 0} for cause in (*CAUSES, "unmarked")
    }
    missed, unmet, failed, unmarked_or_unrecorded = [], [], [], []
    for program in programs():
        row = recorded["programs"].get(program.name, {})
        if "error" in row:
            failed.append(f"{program.name}: {row['error']}")
            continue
        marked = marks(program)
        sites = {r["line"] for r in row["recompiles"]}
        guesses = predicted(program, torch_version)
        for line in sorted(sites, key=lambda n: n or 0):
            reasons_here = [r["reason"] for r in row["recompiles"] if r["line"] == line]
            cause = marked.get(line) if line is not None and line in marked else None
            cause = cause or (reason_cause(reasons_here) if not marked else "unmarked")
            tally[cause]["recorded"] += 1
            if line in guesses:
                tally[cause]["found"] += 1
            else:
                reasons = "; ".join(sorted({r["reason"][:100] for r in row["recompiles"] if r["line"] == line}))
                missed.append(f"{program.name}:{line} ({cause}): {reasons}")
        for line, code in guesses.items():
            cause = CAUSE_OF_RULE[code]
            tally[cause]["predicted"] += 1
            if line in sites:
                tally[cause]["met"] += 1
            else:
                unmet.append(f"{program.name}:{line} {code}")
        if marked and set(marked) != sites or not marked and program.stem.startswith(("same_", "neg_")) and sites:
            unmarked_or_unrecorded.append(
                f"{program.name}: marks {sorted(marked)}, recorded {sorted(sites, key=lambda n: n or 0)}"
            )
    causes = {
        cause: {**c, "recall": _ratio(c["found"], c["recorded"]), "precision": _ratio(c["met"], c["predicted"])}
        for cause, c in tally.items()
    }
    total_recorded = sum(c["recorded"] for c in tally.values())
    total_predicted = sum(c["predicted"] for c in tally.values())
    return {
        "torch": recorded["torch"],
        "programs": len(programs()),
        "recompiling": sum(1 for p in programs() if recorded["programs"].get(p.name, {}).get("recompiles")),
        "causes": causes,
        "recall": _ratio(sum(c["found"] for c in tally.values()), total_recorded),
        "precision": _ratio(sum(c["met"] for c in tally.values()), total_predicted),
        "not_predicted": missed,
        "not_met": unmet,
        "marks_differ": unmarked_or_unrecorded,
        "failed": failed,
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def prove_fixes(scratch: Path) -> list[dict]:
    """Every GM6xx fix on the corpus applied (unsafe ones too, GM6xx alone), the program recorded
    again beside the original: its recompiles at the fixed lines, and its outputs (every tensor and
    number the program leaves in its module namespace, from the same seed) against the original's."""
    import runpy

    import torch

    from graphmend import api

    rows = []
    for program in programs():
        text = program.read_text()
        settings = api.Settings(runs=False).merged({"select": list(CAUSE_OF_RULE)})
        fixable = [d for d in api.check_source(text, program, settings) if d.fix is not None]
        if not fixable:
            continue
        fixed = api.fix_source(text, program, settings, unsafe=True)
        copy = scratch / "fixed" / program.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(fixed.fixed)
        outputs, recompiles, breaks = [], [], []
        for path in (program, copy):
            torch.manual_seed(0)
            torch._dynamo.reset()
            events = record_events(path, scratch / "runs" / path.parent.name)
            recompiles.append(sorted({e["line"] for e in events if e["kind"] == "recompile" and e["line"] is not None}))
            breaks.append(sum(e["count"] for e in events if e["kind"] == "graph_break"))
            torch.manual_seed(0)
            torch._dynamo.reset()
            namespace = runpy.run_path(str(path), run_name="__main__")
            outputs.append({k: v for k, v in namespace.items() if isinstance(v, (torch.Tensor, int, float))})
        lines = sorted({d.range.start.line + 1 for d in fixable})
        equal = outputs[0].keys() == outputs[1].keys() and all(
            torch.equal(a, outputs[1][k]) if isinstance(a, torch.Tensor) else a == outputs[1][k]
            for k, a in outputs[0].items()
        )
        rows.append(
            {
                "program": program.name,
                "fixed_lines": lines,
                "fixes": fixed.applied,
                "recompiles_before": recompiles[0],
                "recompiles_after": recompiles[1],
                "gone": not set(lines) & set(recompiles[1]),
                "breaks_before": breaks[0],
                "breaks_after": breaks[1],
                "outputs_equal": equal,
                "outputs_compared": sorted(outputs[0]),
            }
        )
    return rows


def report(scored: dict) -> str:
    lines = [
        f"torch {scored['torch']}: {scored['programs']} programs, {scored['recompiling']} recompile",
        "| cause | recorded sites | predicted of them | recall | predicted sites | recorded of them | precision |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for cause, c in scored["causes"].items():
        if c["recorded"] or c["predicted"]:
            lines.append(
                f"| {cause} | {c['recorded']} | {c['found']} | {c['recall']} | {c['predicted']} | {c['met']} | {c['precision']} |"
            )
    lines.append(f"all causes: recall {scored['recall']}, precision {scored['precision']}")
    for title, key in (
        ("recorded, no rule predicted", "not_predicted"),
        ("predicted, not recorded", "not_met"),
        ("marks differ from the run", "marks_differ"),
        ("could not run", "failed"),
    ):
        lines.append(f"{title}: {len(scored[key])}")
        lines += [f"  {item}" for item in scored[key]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", type=Path, help="record only, into this file (another release's environment)")
    parser.add_argument("--corpus", type=Path, help="another folder of programs (unmarked: causes read from the rules)")
    parser.add_argument("--fixes", action="store_true", help="apply every GM6xx fix and record each program again")
    args = parser.parse_args()
    if args.corpus:
        use_corpus(args.corpus)
    if args.fixes:
        with tempfile.TemporaryDirectory(prefix="graphmend-recompile-fixes-") as scratch:
            rows = prove_fixes(Path(scratch))
        for row in rows:
            print(
                f"{row['program']}: {row['fixes']} fix(es) at {row['fixed_lines']}; recompiles at "
                f"{row['recompiles_before']} -> {row['recompiles_after']}; gone {row['gone']}; graph breaks "
                f"{row['breaks_before']} -> {row['breaks_after']}; outputs equal "
                f"{row['outputs_equal']} ({', '.join(row['outputs_compared'])})"
            )
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        return int(not all(r["gone"] and r["outputs_equal"] and r["breaks_after"] <= r["breaks_before"] for r in rows))
    if args.worker:
        args.worker.write_text(json.dumps(recorded_everywhere()))
        return 0
    scored = score(recorded_everywhere())
    print(report(scored))
    if args.json:
        args.json.write_text(json.dumps(scored, indent=1))
    return int(bool(scored["marks_differ"]) or bool(scored["failed"]))


if __name__ == "__main__":
    sys.exit(main())
