"""The Dynamo corpus under other torch releases, with graphmend told which one (issue 31, item 4).

    python -m venv /tmp/t291 && /tmp/t291/bin/pip install torch==2.9.1 numpy libcst==1.9.0
    python -m venv /tmp/t214 && /tmp/t214/bin/pip install torch==2.14.1 numpy libcst==1.9.0
    python benchmarks/torch_versions.py /tmp/t291/bin/python /tmp/t214/bin/python .venv/bin/python [--json OUT]
    python benchmarks/torch_versions.py --record /tmp/t291/bin/python /tmp/t214/bin/python .venv/bin/python
    python benchmarks/torch_versions.py --messages /tmp/t291/bin/python .venv/bin/python /tmp/t214/bin/python
    python benchmarks/torch_versions.py --recompiles /tmp/t291/bin/python .venv/bin/python /tmp/t214/bin/python

Each interpreter is its own environment, never the test one. In a subprocess of each, every
program of `tests/dynamo_corpus/` runs under that torch (`dynamo_harness.measure`: the graph_breaks
log on inputs that take every branch). Then graphmend checks each program with `torch-version` set
to that release. Per release: the lines where Dynamo's breaks differ from the corpus's
`# dynamo: break` marks (which are torch 2.13.0's), and graphmend's misses (Dynamo breaks, graphmend
is silent) and false alarms (graphmend reports a line where Dynamo does not break).

With `--messages`, each environment runs `inlined_messages.py` (issue 50): a module that prints,
logs and warns, compiled itself and inlined (an `nn.Sequential`, `super()`, `checkpoint`), as
written, fixed for that release and deferred, under eager, aot_eager and inductor.

With `--recompiles`, each environment records `benchmarks/recompile_corpus/` (`recompile_prediction.py
--worker`), scored against graphmend's GM6xx predictions with `torch-version` set to that release.

With `--record`, each environment runs the recorder's tests instead (`tests/test_record.py`, real
Dynamo under that torch, graphmend from this tree on PYTHONPATH; the environment needs pytest, and
transformers 4.49.0 for the corpus programs that import it): each test's outcome per release.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests")]


def worker(out: Path) -> None:
    """In the release's environment: each corpus program's break lines (with Dynamo's reason id)."""
    import torch
    from dynamo_harness import corpus_files, measure

    programs = {}
    for path in corpus_files():
        try:
            breaks, graphs = measure(path)
            programs[path.name] = {"breaks": sorted({(b.line, b.reason_id) for b in breaks}), "graphs": graphs}
        except Exception as error:  # noqa: BLE001 - a program this release cannot run is reported, not fatal
            programs[path.name] = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
    out.write_text(json.dumps({"torch": torch.__version__, "programs": programs}))


def measure_release(python: str) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "record.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "tests")])}
        done = subprocess.run(
            [python, __file__, "--worker", str(out)], env=env, capture_output=True, text=True, check=False
        )
        if not out.exists():
            raise SystemExit(f"{python}: the corpus did not run\n{done.stderr[-2000:]}")
        return json.loads(out.read_text())


def compare(record: dict) -> dict:
    """graphmend with `torch-version` = the record's release against the record's breaks."""
    from dynamo_harness import corpus_files, expected_break_lines, flagged

    from graphmend.api import check_source
    from graphmend.settings import Settings

    release = ".".join(record["torch"].split("+")[0].split(".")[:2])
    settings = Settings().merged({"torch-version": release})
    changed, misses, false_alarms, errors = [], [], [], []
    for path in corpus_files():
        measured = record["programs"].get(path.name, {"error": "not run"})
        if "error" in measured:
            errors.append(f"{path.name}: {measured['error']}")
            continue
        dynamo = {line for line, _ in measured["breaks"]}
        marks = expected_break_lines(path)
        ours = {line for line, _ in flagged(check_source(path.read_text(encoding="utf-8"), path, settings))}
        changed += [f"{path.name}:{line} breaks" for line in sorted(dynamo - marks)]
        changed += [f"{path.name}:{line} no longer breaks" for line in sorted(marks - dynamo)]
        misses += [f"{path.name}:{line}" for line in sorted(dynamo - ours)]
        false_alarms += [f"{path.name}:{line}" for line in sorted(ours - dynamo)]
    return {
        "torch": record["torch"],
        "torch_version_setting": release,
        "programs": len(record["programs"]) - len(errors),
        "changed_from_marks": changed,
        "misses": misses,
        "false_alarms": false_alarms,
        "errors": errors,
    }


def record_tests(python: str) -> dict:
    """tests/test_record.py in the release's environment: each test's outcome."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    version = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__)"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        subprocess.run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={report}", "tests/test_record.py"],
            cwd=ROOT, env=env, capture_output=True, check=False,
        )  # fmt: skip
        if not report.exists():
            raise SystemExit(f"{python}: pytest did not run tests/test_record.py")
        cases = ElementTree.parse(report).getroot().iter("testcase")
        outcomes = {str(case.get("name")): _outcome(case) for case in cases}
    return {"torch": version, "tests": outcomes}


def _outcome(case: ElementTree.Element) -> str:
    for tag in ("failure", "error", "skipped"):
        found = case.find(tag)
        if found is not None:
            message = (found.get("message") or "").splitlines()
            return f"{tag}: {message[0][:120]}" if message else tag
    return "passed"


def print_record_tests(results: list[dict]) -> None:
    print("| test | " + " | ".join(r["torch"] for r in results) + " |")
    print("|---" * (len(results) + 1) + "|")
    for name in dict.fromkeys(name for r in results for name in r["tests"]):
        print(f"| `{name}` | " + " | ".join(r["tests"].get(name, "not run") for r in results) + " |")


def recompiles(python: str) -> dict:
    """`recompile_prediction.py`'s corpus recorded under the environment's torch, scored against the
    predictions graphmend makes when told that release (`torch-version`)."""
    import recompile_prediction

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "recorded.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
        script = ROOT / "benchmarks" / "recompile_prediction.py"
        done = subprocess.run(
            [python, str(script), "--worker", str(out)], env=env, capture_output=True, text=True, check=False
        )
        if not out.exists():
            raise SystemExit(f"{python}: the recording failed:\n{done.stderr[-2000:]}")
        recorded = json.loads(out.read_text())
    release = ".".join(recorded["torch"].split("+")[0].split(".")[:2])
    scored = recompile_prediction.score(recorded, release)
    print(recompile_prediction.report(scored), end="\n\n")
    return scored


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pythons", nargs="*", help="interpreters of the environments, one torch release each")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--record", action="store_true", help="run tests/test_record.py in each environment")
    parser.add_argument(
        "--messages",
        action="store_true",
        help="the message fixes where Dynamo inlines (benchmarks/inlined_messages.py)",
    )
    parser.add_argument(
        "--recompiles",
        action="store_true",
        help="the recompile corpus recorded in each environment, scored against the GM6xx predictions",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker)
        return 0
    if args.messages:
        import inlined_messages

        measured = [inlined_messages.measure(python) for python in args.pythons]
        inlined_messages.print_table(measured)
        if args.json is not None:
            args.json.write_text(json.dumps(measured, indent=1))
        return 0
    if args.recompiles:
        scored = [recompiles(python) for python in args.pythons]
        if args.json is not None:
            args.json.write_text(json.dumps(scored, indent=1))
        return 1 if any(s["failed"] for s in scored) else 0
    if args.record:
        outcomes = [record_tests(python) for python in args.pythons]
        print_record_tests(outcomes)
        if args.json is not None:
            args.json.write_text(json.dumps(outcomes, indent=1))
        return 1 if any(o.startswith(("failure", "error")) for r in outcomes for o in r["tests"].values()) else 0
    results = [compare(measure_release(python)) for python in args.pythons]
    print("| torch | programs | lines that differ from 2.13.0's marks | graphmend misses | false alarms |")
    print("|---|---|---|---|---|")
    for result in results:
        cells = [", ".join(result[key]) or "—" for key in ("changed_from_marks", "misses", "false_alarms")]
        print(
            f"| {result['torch']} (`torch-version = {result['torch_version_setting']}`) | {result['programs']} | "
            + " | ".join(cells)
            + " |"
        )
        for error in result["errors"]:
            print(f"  not run: {error}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if any(r["misses"] or r["false_alarms"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
