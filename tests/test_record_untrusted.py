"""Runs and traces made elsewhere (issue 53): `record --import-trace` and a run's files are read as
untrusted input. A trace naming files outside the project (`/etc/passwd`, `/etc/hosts`,
`/etc/shadow`), a device or a FIFO makes graphmend read none of them (an audit hook in the reading
process checks every `open`); a FIFO in the trace folder, `/dev/zero` as the trace, bad types,
NUL bytes, negative and huge line numbers, and a 500 MB trace neither crash nor hang it, and the
memory it takes stays under 200 MB; a bad value is skipped and counted, and SARIF stays valid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import audited
import pytest

from graphmend import api

OUTSIDE = ("/etc/passwd", "/etc/hosts", "/etc/shadow", "/dev/zero")


def _glog(metadata: dict, payload: str | None = None) -> str:
    """A TORCH_TRACE record as torch writes it: a glog prefix, the metadata, the payload's lines tabbed."""
    line = "V1128 14:37:06.297000 8496 torch/_dynamo/convert_frame.py:2134] " + json.dumps(metadata) + "\n"
    return line + "".join(f"\t{part}\n" for part in (payload or "").splitlines()) if payload else line


def _break(path: str, line: object) -> str:
    payload = (
        f"Graph break in user code at {path}:{line}\nGraph Break Reason: Data-dependent branching\n"
        "  Explanation: Detected data-dependent branching.\nUser code traceback:\n"
        f'  File "{path}", line {line}, in forward\n'
    )
    return _glog({"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}, "frame_id": 0}, payload)


def _failure(path: object, line: object) -> str:
    metrics = {
        "co_name": "forward",
        "co_filename": path,
        "co_firstlineno": line,
        "fail_type": "Unsupported",
        "fail_reason": "boom",
        "fail_user_frame_filename": path,
        "fail_user_frame_lineno": line,
        "stack_trace": [f"Line: {line}, Name: forward, Filename: {path}"],
    }
    return _glog({"compilation_metrics": metrics, "frame_id": 0, "frame_compile_id": 0})


def _hostile_trace(folder: Path) -> None:
    folder.mkdir()
    records = [_break(path, 1) for path in OUTSIDE]
    records += [_failure(path, 2) for path in OUTSIDE]
    records += [_failure("/etc/passwd", "7x"), _failure("/p/a\x00b.py", 3), _failure(["a"], 1)]
    records += [_break("/p/prog.py", -3), _break("/p/prog.py", 10**23), _failure("/p/prog.py", 10**23)]
    records += [_glog({"compilation_metrics": "not a dict"}), "not a record at all\n", "\tan orphan payload line\n"]
    (folder / "dedicated_log_torch_trace_1.log").write_text("".join(records))
    os.mkfifo(folder / "dedicated_log_torch_trace_fifo.log")


def _import(project: Path, trace: Path, *extra: str) -> subprocess.CompletedProcess:
    """`record --import-trace` in an audited process of its own (`audited.graphmend`)."""
    return audited.graphmend(project, "record", "--import-trace", str(trace), *extra)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    return root


def test_a_hostile_trace_reads_nothing_outside_and_neither_crashes_nor_hangs(project: Path, tmp_path: Path) -> None:
    _hostile_trace(tmp_path / "trace")
    done = _import(project, tmp_path / "trace", "--output-format", "sarif")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    opened = audited.opened(done)
    assert not [p for p in opened if p in OUTSIDE or p.endswith("fifo.log")], opened
    (run,) = (project / ".graphmend" / "runs").iterdir()
    written = "".join(p.read_text() for p in run.glob("process-*.jsonl"))
    assert "root:" not in written and "localhost" not in written  # no line of /etc/passwd or /etc/hosts
    sarif = json.loads(done.stdout)
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]]
    assert lines and all(0 < line <= 10_000_000 for line in lines), lines
    assert "localhost" not in done.stdout + done.stderr.split("OPENED")[0]


def test_a_trace_line_nested_deep_is_no_record(project: Path, tmp_path: Path) -> None:
    """One line with a log prefix and metadata nested 200,000 deep (issue 68: `record --import-trace`
    ended in "internal error: RecursionError"): skipped, and the lines around it are read."""
    (tmp_path / "trace").mkdir()
    deep = "V1128 14:37:06.297000 8496 torch/_dynamo/convert_frame.py:2134] " + "[" * 200_000 + "]" * 200_000 + "\n"
    (tmp_path / "trace" / "dedicated_log_torch_trace_1.log").write_text(
        deep + _break(str(project / "prog.py"), 5), encoding="utf-8"
    )
    done = _import(project, tmp_path / "trace")
    assert done.returncode == 0 and "RecursionError" not in done.stderr, done.stderr
    assert "recorded nothing" not in done.stderr, done.stderr


def test_devices_and_fifos_as_the_trace_are_read_as_nothing(project: Path, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "trace.log")
    for trace in (Path("/dev/zero"), tmp_path / "trace.log"):
        done = _import(project, trace)
        assert done.returncode == 0, done.stderr
        assert "recorded nothing" in done.stderr, done.stderr


def test_a_500_mb_trace_is_streamed_in_little_memory(project: Path, tmp_path: Path) -> None:
    trace = tmp_path / "big.log"
    graph = _glog(
        {"artifact": {"name": "inductor_output_code", "encoding": "string"}}, ("x = 1  # " + "a" * 990 + "\n") * 2048
    )
    with open(trace, "w") as out:
        out.write(_break(str(project / "prog.py"), 2))
        while out.tell() < 500 * 1024 * 1024:
            out.write(graph)
        out.write(_break(str(project / "prog.py"), 3))
        out.write("V1128 " + "x" * (9 << 20) + "\n")  # one line past any record's size
    (project / "prog.py").write_text("import torch\nif x:\n    pass\n")
    done = _import(project, trace, "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert sorted(e["location"]["line"] for e in json.loads(done.stdout)) == [2, 3]
    assert audited.peak_mb(done) < 200, audited.peak_mb(done)


def _run_folder(project: Path, lines: list[object]) -> Path:
    run = project / ".graphmend" / "runs" / "20261128-000000-1"
    run.mkdir(parents=True)
    header = {"header": {"torch": "2.13.0", "started": 1.0}}
    text = "\n".join(json.dumps(item) if not isinstance(item, str) else item for item in [header, *lines])
    (run / "process-1.jsonl").write_text(text + "\n")
    (run / "run.json").write_text(json.dumps({"started": 1.0, "ended": 2.0, "exit_code": 0}))
    return run


def test_a_hostile_run_file_is_validated_value_by_value(project: Path) -> None:
    prog = project / "prog.py"
    prog.write_text("import torch\n\n\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")

    def event(identity: str, **frame: object) -> dict:
        frame = {"path": str(prog), "line": 5, "func": "f", "text": "if x.sum() > 0:", **frame}
        return {"id": identity, "kind": "graph_break", "reason": "r", "frames": [frame], "files": {}}

    good = event("good")
    bad = [
        event("negative", line=-3),
        event("huge", line=10**23),
        event("text", line="5"),
        event("nul", path=str(prog) + "\x00.py"),
        {**event("kind"), "kind": "unknown"},
        {**event("frames"), "frames": "not a list"},
        {"id": 3, "kind": "graph_break", "frames": []},
        "{not json",
        "[1, 2]",
        "x" * (2 << 20),
    ]
    run = _run_folder(project, [good, *bad, {"again": "good"}, {"again": 5}])
    os.mkfifo(run / "process-fifo.jsonl")
    read = api.read_run(run)
    assert [(e.id, e.count) for e in read.events] == [("good", 2)]
    assert read.skipped == len(bad) + 1  # {"again": 5} names nothing
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "--no-cache", "--output-format", "sarif", "prog.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    results = json.loads(done.stdout)["runs"][0]["results"]
    assert results and all(r["locations"][0]["physicalLocation"]["region"]["startLine"] == 5 for r in results)


def test_a_run_without_its_run_json_is_not_shown(project: Path) -> None:
    prog = project / "prog.py"
    prog.write_text("import torch\n\n\ndef f(x):\n    print(x)\n")
    frame = {"path": str(prog), "line": 5, "func": "f", "text": "print(x)"}
    run = _run_folder(project, [{"id": "a", "kind": "graph_break", "reason": "r", "frames": [frame], "files": {}}])
    (result,) = api.check_paths([prog], jobs=1)
    assert any(d.data.run is not None for d in result.diagnostics)
    (run / "run.json").unlink()  # a run still being written, or one whose graphmend was killed
    (result,) = api.check_paths([prog], jobs=1)
    assert all(d.data.run is None for d in result.diagnostics)


def test_a_run_of_many_events_is_read_in_bounded_work(project: Path) -> None:
    """A shipped run of tens of thousands of distinct events (issue 68: 20,000 took `check` 39 s, and
    the server answered nothing meanwhile: each break was compared with every other to merge
    collapsed stacks). Past `MAX_EVENTS` distinct events the rest are counted as skipped, and a
    collapsed stack is still merged into its full one."""
    from graphmend.record.runs import MAX_EVENTS

    prog = project / "prog.py"
    prog.write_text("import torch\n\n\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    inner = {"path": str(prog), "line": 5, "func": "forward", "text": "if x.sum() > 0:"}
    outer = {"path": str(prog), "line": 2, "func": "forward", "text": "y = self.block(x)"}
    full = {"id": "full", "kind": "graph_break", "reason": "r", "frames": [outer, inner], "files": {}}
    collapsed = {"id": "collapsed", "kind": "graph_break", "reason": "r", "frames": [inner], "files": {}}
    many = [
        {"id": f"e{n}", "kind": "graph_break", "reason": f"r{n}", "frames": [{**inner, "line": 1 + n % 7}], "files": {}}
        for n in range(MAX_EVENTS + 50)
    ]
    read = api.read_run(_run_folder(project, [full, collapsed, *many]))
    assert len(read.events) == MAX_EVENTS - 1  # "collapsed" counted in "full"
    assert read.events[0].id == "full" and read.events[0].count == 2
    assert read.skipped == 52
