"""`graphmend record`: what real Dynamo (torch 2.13.0) meets in a run, recorded at the user's lines.

Each program is run for real under the recorder (`graphmend record -- python PROGRAM`, the
recorder in every Python process through its sitecustomize), and the run read back: graph breaks
in user code and in a library written to a temporary site folder, a repeated break (one event,
counted), a Python-int recompile at the line that made the guard, a shape recompile at the compiled
function, a torch module rebuilt per step recompiling at the user's call, a break under a `forward`
calling a `forward` (torch's first traceback loses the caller) at the user's call, a compile
failure, a subprocess, a crash (what came before is kept), the in-process `recording()` of a
notebook or test, a TORCH_TRACE folder of the same program imported into the same events, and the
text logs standing in for structured records a release lacks. The file also passes under torch
2.9.1 and 2.14.1 (`benchmarks/torch_versions.py --record`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphmend
from graphmend import api
from graphmend.cli import main
from graphmend.record.runs import RecordedEvent, placed

pytest.importorskip("torch")

BREAKS = """\
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        if y.sum() > 0:
            y = y + 1
        return y


model = torch.compile(Model(), backend="eager")
for _ in range(3):
    model(torch.ones(4))
"""  # the break: line 7

LIBRARY_USER = """\
import torch
import noisylib


@torch.compile(backend="eager")
def step(x):
    x = x + 1
    x = noisylib.report(x)
    return x * 2


for _ in range(2):
    step(torch.ones(3))
"""  # the user's call: line 8; the library's print: noisylib/__init__.py line 2

NOISYLIB = 'def report(x):\n    print("value", x.shape)\n    return x\n'

RECOMPILES = """\
import torch


@torch.compile(backend="eager")
def scaled(x, scale):
    x = x + 1
    if scale > 1:
        return x * scale
    return x * 0.5


for scale in (1, 2, 3):
    scaled(torch.ones(4), scale)
"""  # the guard `scale == 1` comes from line 7 (a frame with no tensor op is not compiled at all)


HANDED = """\
import torch


def helper(x):
    if x.sum() > 0:
        return x + 1
    return x * 0.5


def apply(fn, x):
    return fn(x)


stepped = torch.compile(apply, backend="eager")
stepped(helper, torch.ones(2))
stepped(helper, -torch.ones(2))
"""  # no compile site names `helper`: the run shows Dynamo traced it


def record(tmp_path: Path, program: str, *extra: str, env: dict[str, str] | None = None) -> api.Run:
    """Run `program` (written to tmp_path/prog.py) under `graphmend record`, in tmp_path (the
    project root: it has a pyproject.toml), and read the run back."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "prog.py").write_text(program)
    runs = tmp_path / "run"
    code = subprocess.run(
        [sys.executable, "-m", "graphmend", "record", "--out", str(runs), "--", sys.executable, "prog.py", *extra],
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    run = api.read_run(runs)
    run.ended = {**(run.ended or {}), "stderr": code.stderr, "returncode": code.returncode}
    return run


def frames(event: RecordedEvent) -> list[tuple[str, int]]:
    return [(Path(f["path"]).name, f["line"]) for f in event.frames]


def test_a_break_in_user_code_once_per_site_with_its_count(tmp_path: Path) -> None:
    run = record(tmp_path, BREAKS)
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    assert event.gb_id == "GB0170" and event.gb_type == "Data-dependent branching"
    assert frames(event)[-1] == ("prog.py", 7)
    assert event.frames[-1]["text"] == "if y.sum() > 0:"
    assert event.count >= 1 and event.files[str(tmp_path / "prog.py")] is not None
    user, elsewhere = placed(event, tmp_path)
    assert user is not None and (Path(user["path"]).name, user["line"]) == ("prog.py", 7) and elsewhere is None
    assert run.torch and run.torch.startswith("2.") and run.ended["exit_code"] == 0
    assert "Graph break" not in run.ended["stderr"]  # the text log the recorder listens to stays its own


def test_a_break_in_a_library_is_placed_at_the_users_call(tmp_path: Path) -> None:
    site = tmp_path / "site" / "site-packages"
    (site / "noisylib").mkdir(parents=True)
    (site / "noisylib" / "__init__.py").write_text(NOISYLIB)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))  # graphmend's own too
    run = record(tmp_path, LIBRARY_USER, env={"PYTHONPATH": path})
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    assert event.gb_id == "GB0059"  # print
    user, library = placed(event, tmp_path)
    assert user is not None and (Path(user["path"]).name, user["line"]) == ("prog.py", 8)
    assert library is not None and library["path"].endswith("noisylib/__init__.py") and library["line"] == 2
    assert library["text"] == 'print("value", x.shape)'
    # met by the step's compile and by the library function's own (one event, counted twice or more)
    assert event.count >= 2


def test_a_recompile_is_named_at_the_line_that_made_the_guard(tmp_path: Path) -> None:
    run = record(tmp_path, RECOMPILES)
    recompiles = [e for e in run.events if e.kind == "recompile"]
    by_line = {frames(e)[-1]: e for e in recompiles}
    assert ("prog.py", 7) in by_line, [(frames(e), e.reason) for e in recompiles]
    assert by_line[("prog.py", 7)].guard == "scale == 1"
    assert by_line[("prog.py", 7)].frames[-1]["text"] == "if scale > 1:"
    assert "Recompiling function" not in run.ended["stderr"]


def test_a_shape_recompile_is_placed_at_the_compiled_function(tmp_path: Path) -> None:
    program = (
        "import torch\n\n\n"
        '@torch.compile(backend="eager", dynamic=False)\n'
        "def double(x):\n"  # line 5
        "    return x * 2 + 1\n\n\n"
        "for n in (2, 3):\n"
        "    double(torch.ones(n))\n"
    )
    run = record(tmp_path, program)
    (event,) = [e for e in run.events if e.kind == "recompile"]
    assert "size mismatch at index 0. expected 2, actual 3" in event.reason
    assert frames(event) == [("prog.py", 5)] and event.stack == "incomplete"  # no user line: the function's


def test_a_torch_module_rebuilt_per_step_recompiles_at_the_users_line(tmp_path: Path) -> None:
    program = (
        "import torch\n\n"
        "x = torch.ones(2, 4)\n"
        "for slope in (0.1, 0.2):\n"
        '    torch.compile(torch.nn.LeakyReLU(slope), backend="eager")(x)\n'  # line 5: the rebuild
    )
    run = record(tmp_path, program)
    (event,) = [e for e in run.events if e.kind == "recompile"]
    assert event.guard == "fn.negative_slope == 0.1"
    user, guard = placed(event, tmp_path)  # the guard is made in torch's forward, the call is the user's
    assert user is not None and (Path(user["path"]).name, user["line"]) == ("prog.py", 5)
    assert user["text"] == 'torch.compile(torch.nn.LeakyReLU(slope), backend="eager")(x)'
    assert guard is not None and guard["path"].endswith("torch/nn/modules/activation.py")


SAME_NAMED_FORWARDS = """\
import torch
import pairlib


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pairs = pairlib.Pairs()

    def forward(self, x):
        return self.pairs(x * 2)


torch.compile(Model(), backend="eager")(torch.randn(8))
"""  # the user's call: line 11; the break: pairlib/__init__.py line 6

PAIRLIB = """\
import torch


class Pairs(torch.nn.Module):
    def forward(self, x):
        return torch.where(x > 0)[0]
"""


def test_a_break_under_a_forward_calling_a_forward_is_placed_at_the_users_call(tmp_path: Path) -> None:
    # the first compile's traceback loses the user's `forward` (torch collapses a frame into the
    # same-named one it calls); the later compile's has it: one break, at the user's call
    site = tmp_path / "site" / "site-packages"
    (site / "pairlib").mkdir(parents=True)
    (site / "pairlib" / "__init__.py").write_text(PAIRLIB)
    run = record(tmp_path, SAME_NAMED_FORWARDS, env={"PYTHONPATH": str(site)})
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    user, library = placed(event, tmp_path)
    assert user is not None and (Path(user["path"]).name, user["line"]) == ("prog.py", 11)
    assert library is not None and library["path"].endswith("pairlib/__init__.py") and library["line"] == 6
    assert event.count >= 2


def test_a_compile_failure(tmp_path: Path) -> None:
    program = (
        "import torch\n\n\n"
        '@torch.compile(backend="eager", fullgraph=True)\n'
        "def f(x):\n"
        '    print("no")\n'  # line 6: fullgraph=True turns the break into an error
        "    return x\n\n\n"
        "try:\n"
        "    f(torch.ones(2))\n"
        "except Exception:\n"
        "    pass\n"
    )
    run = record(tmp_path, program)
    kinds = {e.kind for e in run.events}
    assert "compile_failure" in kinds, [(e.kind, e.reason) for e in run.events]
    (failure,) = [e for e in run.events if e.kind == "compile_failure"]
    assert "Unsupported" in failure.reason and frames(failure) == [("prog.py", 6)]
    assert failure.gb_id == "GB0059" and failure.gb_type == "Failed to trace builtin operator"
    assert failure.frames[0]["text"] == 'print("no")'  # read from the file: the record quotes none


def test_the_recorder_reaches_a_subprocess_and_keeps_what_came_before_a_crash(tmp_path: Path) -> None:
    (tmp_path / "child.py").write_text(BREAKS)
    program = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, 'child.py'], check=True)\n"
        "raise SystemExit(3)\n"  # the parent fails after its child compiled
    )
    run = record(tmp_path, program)
    assert run.ended["exit_code"] == 3 and run.ended["returncode"] == 3  # the command's own exit code
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    assert frames(event)[-1] == ("child.py", 7)
    assert len({h["pid"] for h in run.headers}) == 2  # the parent (no events) and the child


def test_recording_in_process(tmp_path: Path) -> None:
    import torch

    def scaled(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x

    compiled = torch.compile(scaled, backend="eager")
    torch._dynamo.reset()
    with graphmend.recording(tmp_path / "run") as run_folder:  # the notebook's and test's entry
        compiled(torch.ones(2))
    run = api.read_run(run_folder)
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    assert frames(event)[-1] == (Path(__file__).name, scaled.__code__.co_firstlineno + 1)
    torch._dynamo.reset()


def test_the_text_logs_stand_in_for_structured_records_a_release_lacks(tmp_path: Path) -> None:
    """With the structured graph-break and recompile records filtered out (as a release that
    dropped or renamed them), the `graph_breaks` and `recompiles` text logs give the same events,
    their stacks marked incomplete; with the records there, the text adds nothing."""
    import logging

    import torch

    class WithoutRecords(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            artifact = getattr(record, "metadata", {}).get("artifact") or {}
            return artifact.get("name") not in ("dynamo_graph_break_reason", "recompile_reasons")

    def scaled(x: torch.Tensor, scale: int) -> torch.Tensor:
        x = x + 1
        if scale > 1:
            x = x * scale
        if x.sum() > 0:
            return x * 2
        return x

    def met(run_folder: Path) -> dict[tuple[str, int], RecordedEvent]:
        events = api.read_run(run_folder).events
        return {
            (e.kind, e.frames[-1]["line"]): e for e in events if Path(e.frames[-1]["path"]).name == "test_record.py"
        }

    first = scaled.__code__.co_firstlineno
    compiled = torch.compile(scaled, backend="eager")
    trace = logging.getLogger("torch.__trace")
    without = WithoutRecords()
    runs = {}
    for name in ("text", "records"):
        torch._dynamo.reset()
        torch._dynamo.utils.reset_graph_break_dup_checker()
        if name == "text":
            trace.addFilter(without)
        try:
            with graphmend.recording(tmp_path / name) as runs[name]:
                for scale in (1, 2, 2):
                    compiled(torch.ones(3), scale)
        finally:
            trace.removeFilter(without)
    text, records = met(runs["text"]), met(runs["records"])
    assert text.keys() == records.keys() >= {("graph_break", first + 4), ("recompile", first + 2)}, records
    for key, event in text.items():
        assert event.stack == "incomplete" and event.id == records[key].id and event.count == records[key].count
    assert text["graph_break", first + 4].gb_id == "GB0170" and records["graph_break", first + 4].stack == "complete"
    assert text["recompile", first + 2].guard == "scale == 1"
    assert text["recompile", first + 2].frames[-1]["text"] == "if scale > 1:"
    torch._dynamo.reset()


def test_a_cuda_graph_skip_met_while_the_graph_runs_is_recorded_at_the_users_line(tmp_path: Path) -> None:
    """Cudagraph trees find a mutated input at the graph's first replay, outside any compile's
    metrics, and only warn (measured on an H200, torch 2.11: the first recorder missed it). The skip
    goes through torch's own `log_cudagraph_skip_and_bump_counter`, with inductor's message; a
    compile's skip in its metrics reads the same "Found from" stack. The user still sees the warning."""
    import logging

    import torch
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    from graphmend.record import trace

    def step(x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1

    line = step.__code__.co_firstlineno + 1
    found = f' Found from : \n   File "{__file__}", line {line}, in step\n    x.mul_(2)\n'
    cudagraphs = logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs")
    before = (cudagraphs.level, cudagraphs.propagate)
    with graphmend.recording(tmp_path / "run") as run_folder:
        log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances)." + found)
    assert (cudagraphs.level, cudagraphs.propagate) == before
    (event,) = api.read_run(run_folder).events
    assert (event.kind, event.reason) == ("cudagraph_skip", "skipping cudagraphs due to mutated inputs (1 instances).")
    assert frames(event) == [(Path(__file__).name, line)]
    metrics = {"cudagraph_skip_reason": "skipping cudagraphs due to control flow operator: torch.cond." + found}
    (skip,) = trace.from_metrics({**metrics, "co_filename": __file__, "co_firstlineno": line - 1}, "1/0")
    assert [(f.line, f.text) for f in skip.frames] == [(line, "x.mul_(2)")]


def test_the_records_as_other_releases_write_them(tmp_path: Path) -> None:
    """Record forms measured on torch 2.9.1 (and 2.13.0's skip): a frame Dynamo skips names its user
    code before Dynamo's traceback and its reason in the exception; a recompile has no user stack, its
    guard's comment names the line with the path shortened against torch's folder."""
    from graphmend.record import trace

    skip = (
        "Graph break: skip: from user code at:\n"
        '  File "/p/prog.py", line 18, in torch_dynamo_resume_in_forward_at_17\n'
        "    head = hidden[: np.sum(PLAN)]\n\n"
        "Traceback (most recent call last):\n"
        '  File "/t/torch/_dynamo/convert_frame.py", line 1625, in __call__\n'
        "    result = self._inner_convert(\n"
        "torch._dynamo.exc.Unsupported: Dynamic slicing with Tensor arguments\n"
        "  Explanation: Creating slices with Tensor arguments is not supported.\n\n"
        " For more details about this graph break, please visit: "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0038.html\n"
    )
    event = trace.graph_break(skip, "2/0", {})
    assert [(f.path, f.line, f.text) for f in event.frames] == [("/p/prog.py", 18, "head = hidden[: np.sum(PLAN)]")]
    assert (event.gb_type, event.gb_id) == ("Dynamic slicing with Tensor arguments", "GB0038")
    payload = '[\n"0/0: scale == 1' + " " * 47 + '# if scale > 1:  # gmv/rec.py:7 in scaled"\n]'
    guard = trace.recompile_reasons(payload, "0/1")
    assert guard.stack == "incomplete" and guard.extra == {"guard": "scale == 1"}
    code = (trace.Frame("/tmp/gmv/rec.py", 4, "scaled"),)
    placed = trace.placed_in(guard, code)
    assert [(f.path, f.line, f.text) for f in placed.frames] == [("/tmp/gmv/rec.py", 7, "if scale > 1:")]
    assert trace.placed_in(guard, (trace.Frame("/tmp/other.py", 4, "f"),)).frames == guard.frames


def test_an_imported_torch_trace_gives_the_same_events(tmp_path: Path) -> None:
    recorded = record(tmp_path, RECOMPILES)
    trace = tmp_path / "trace"
    subprocess.run(
        [sys.executable, str(tmp_path / "prog.py")],
        cwd=tmp_path,
        env={**os.environ, "TORCH_TRACE": str(trace)},
        check=True,
        capture_output=True,
    )
    imported = api.read_run(api.import_trace(trace, tmp_path / "imported"))
    assert sorted((e.id, e.kind, e.reason) for e in imported.events) == sorted(
        (e.id, e.kind, e.reason) for e in recorded.events
    )


def test_the_cli_says_what_the_run_met_at_the_users_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "prog.py").write_text(BREAKS)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        code = main(["record", "--", sys.executable, "prog.py"])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code == 0
    assert "prog.py:7: graph break: GB0170 Data-dependent branching" in err
    (run,) = (tmp_path / ".graphmend" / "runs").iterdir()
    assert "graphmend: recorded 1 graph break, torch " in err and run.name in err
    assert (tmp_path / ".graphmend" / ".gitignore").read_text().strip().endswith("*")
    assert json.loads((run / "run.json").read_text())["exit_code"] == 0
    assert main(["record"]) == 2 and "needs a command" in capsys.readouterr().err
    os.chdir(tmp_path)
    try:
        assert main(["record", "--output-format", "json", "--", sys.executable, "prog.py"]) == 0
        (event,) = json.loads(capsys.readouterr().out)
        assert (event["kind"], event["gb_id"], event["location"]["line"]) == ("graph_break", "GB0170", 7)
        assert event["url"].endswith("/gb0170.html") and event["library"] is None
        assert main(["record", "--output-format", "sarif", "--", sys.executable, "prog.py"]) == 0
        (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
        location = result["locations"][0]["physicalLocation"]
        assert (result["ruleId"], location["artifactLocation"]["uri"], location["region"]["startLine"]) == (
            "graph_break",
            "prog.py",
            7,
        )
    finally:
        os.chdir(cwd)


def test_a_forked_child_writes_a_file_of_its_own(tmp_path: Path) -> None:
    """DataLoader workers and the like fork after the recorder is in place: the child's events go to
    its own file, not interleaved with the parent's."""
    (tmp_path / "child.py").write_text(BREAKS)
    program = (
        "import os, runpy\n"
        "import torch\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    runpy.run_path('child.py')\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    run = record(tmp_path, program)
    (event,) = [e for e in run.events if e.kind == "graph_break"]
    assert frames(event)[-1] == ("child.py", 7)
    files = sorted(p.name for p in (tmp_path / "run").glob("process-*.jsonl"))
    assert len(files) == 2 and len(event.processes) == 1, files


def test_the_recorder_agrees_with_dynamos_graph_break_log_on_corpus_programs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The structured trace against the independent graph_breaks text log on every tenth corpus
    program (`benchmarks/record_truth.py` runs all 125): the same break lines in the program, which
    are its `# dynamo: break` marks. The marks are torch 2.13.0's; under another release the recorder
    has every line the log has, and more only where 2.13.0 breaks: a frame the release skips
    (2.9.1: `pos_numpy_sizes.py:18`) is a "skip" message the log's reading does not count."""
    import torch

    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "benchmarks"))
    from dynamo_harness import corpus_files, expected_break_lines, measure
    from record_truth import recorded_lines

    for number, program in enumerate(corpus_files()[::10]):
        program = program.resolve()
        with graphmend.recording(tmp_path / str(number)) as run:
            breaks, _ = measure(program)
        recorded, logged, marks = recorded_lines(run, program), {b.line for b in breaks}, expected_break_lines(program)
        if torch.__version__.startswith("2.13."):
            assert recorded == logged == marks, program.name
        else:
            assert logged <= recorded <= logged | marks, program.name


def test_the_ci_gate_passes_on_its_baseline_and_names_a_new_break(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`record --baseline`: written once, then the same program passes (even with its lines moved)
    and a program with a new break fails, naming it at its line."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "prog.py").write_text(BREAKS)
    baseline = tmp_path / "graphmend-baseline.json"
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        gate = ["record", "--baseline", str(baseline), "--", sys.executable, "prog.py"]
        assert main([*gate[:3], "--write-baseline", *gate[3:]]) == 0
        assert json.loads(baseline.read_text())["events"][0]["user"]["text"] == "if y.sum() > 0:"
        capsys.readouterr()
        (tmp_path / "prog.py").write_text("# a line above moves every break down\n" + BREAKS)
        assert main(gate) == 0
        assert "nothing new since" in capsys.readouterr().err
        with_print = BREAKS.replace("        y = x * 2\n", "        y = x * 2\n        print('y', y)\n")
        (tmp_path / "prog.py").write_text(with_print)
        assert main([*gate[:3], "--output-format", "github", *gate[3:]]) == 1
        out, err = capsys.readouterr()
        assert "::error file=prog.py,line=7,title=graphmend record::new since the baseline: graph break: GB0059" in out
        assert "1 event new since" in err
        assert main(["record", "--baseline", str(tmp_path / "missing.json"), "--", sys.executable, "prog.py"]) == 2
        assert "--write-baseline" in capsys.readouterr().err
    finally:
        os.chdir(cwd)


def test_an_event_follows_its_line_through_an_edit_or_goes_stale(tmp_path: Path) -> None:
    """After the run, the file changes: the event moves with its line's text when exactly one line
    near it holds that text, and is stale (None) when none does or several do."""
    from graphmend.record.log import file_hash
    from graphmend.record.runs import RecordedFrame, current_line

    (tmp_path / "prog.py").write_text(BREAKS)
    recorded = file_hash(str(tmp_path / "prog.py"))  # as the recorder hashed it during the run
    frame: RecordedFrame = {"path": "prog.py", "line": 7, "func": "f", "text": "if y.sum() > 0:"}
    assert current_line(frame, recorded, BREAKS) == 7  # unchanged
    assert current_line({**frame, "text": ""}, recorded, BREAKS) == 7  # by the hash, not the text
    moved = "# two lines\n# above\n" + BREAKS
    assert current_line(frame, recorded, moved) == 9
    assert current_line(frame, recorded, BREAKS.replace("if y.sum() > 0:", "if y.mean() > 0:")) is None
    twice = BREAKS.replace("        y = x * 2\n", "        if y.sum() > 0:\n            pass\n        y = x * 2\n")
    assert current_line(frame, recorded, twice) is None  # ambiguous: two lines hold it


def test_torchrun_gives_one_file_per_rank(tmp_path: Path) -> None:
    program = (
        "import torch\n"
        "import torch.distributed as dist\n\n"
        'dist.init_process_group("gloo")\n\n\n'
        '@torch.compile(backend="eager")\n'
        "def step(x):\n"
        "    y = x * 2\n"
        "    if y.sum() > 0:\n"  # line 10
        "        y = y + dist.get_rank()\n"
        "    return y\n\n\n"
        "step(torch.ones(3))\n"
        "dist.destroy_process_group()\n"
    )
    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("torchrun is not installed beside this Python")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "prog.py").write_text(program)
    port = str(29500 + os.getpid() % 400)
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "record", "--out", "run", "--", str(torchrun), "--nproc_per_node", "2",
         "--master_port", port, "prog.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    ranks = sorted(p.name.split("-")[1] for p in (tmp_path / "run").glob("process-rank*.jsonl"))
    assert ranks == ["rank0", "rank1"]
    (event,) = api.read_run(tmp_path / "run").events
    assert frames(event)[-1] == ("prog.py", 10) and event.count >= 2 and len(event.processes) == 2


def test_check_marks_the_findings_the_newest_run_met(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`graphmend check` reads the newest run under the project root: a static finding on a line the
    run met is confirmed (count, run) in JSON and in the text notes, also after lines above it moved;
    `--no-runs` and a project with no run leave the output as it was."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "prog.py").write_text(BREAKS)
    before = api.check_paths([tmp_path / "prog.py"], jobs=1)
    assert before[0].diagnostics and before[0].diagnostics[0].data.run is None  # no run yet
    subprocess.run(
        [sys.executable, "-m", "graphmend", "record", "--", sys.executable, "prog.py"],
        cwd=tmp_path, capture_output=True, check=True,
    )  # fmt: skip
    (tmp_path / "prog.py").write_text("# moved down by one line\n" + BREAKS)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["check", "--output-format", "json", "prog.py"]) == 1
        (finding,) = json.loads(capsys.readouterr().out)
        assert (finding["code"], finding["line"]) == ("GM101", 8)
        assert finding["run"]["count"] >= 1 and finding["run"]["run"].startswith("20")
        assert main(["check", "prog.py"]) == 1
        assert "confirmed: the run of " in capsys.readouterr().out
        assert main(["check", "--no-runs", "--output-format", "json", "prog.py"]) == 1
        assert "run" not in json.loads(capsys.readouterr().out)[0]
    finally:
        os.chdir(cwd)


def test_check_reports_what_only_the_run_met_and_analyses_what_it_shows_compiled(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Events at lines no static rule reports are findings of the run's own rules: the library's
    print at the user's call (GM501, the library line related and in `library`), the recompile at
    the line that made the guard (predicted by GM601: confirmed). A helper compiled code is handed as an
    argument is compiled code (the run traced it): its break is GM101's finding, confirmed, with
    GM101's rewrite, and `graphmend fix` applies it."""
    site = tmp_path / "site" / "site-packages"
    (site / "noisylib").mkdir(parents=True)
    (site / "noisylib" / "__init__.py").write_text(NOISYLIB)
    program = LIBRARY_USER + "\n\n" + RECOMPILES.split("\n", 2)[2] + "\n\n" + HANDED.split("\n", 2)[2]
    record(tmp_path, program, env={"PYTHONPATH": str(site)})
    runs = tmp_path / ".graphmend" / "runs" / "20990101-000000-1"
    runs.parent.mkdir(parents=True)
    (tmp_path / "run").rename(runs)  # the project's newest run
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["check", "--output-format", "json", "prog.py"]) == 1
        found = {(f["code"], f["line"]): f for f in json.loads(capsys.readouterr().out)}
        lines = program.splitlines()
        call = lines.index("    x = noisylib.report(x)") + 1
        library = found[("GM501", call)]
        assert library["library"]["line"] == 2 and library["library"]["callee"] == "report"
        assert library["related"][0]["kind"] == "recorded" and library["url"].endswith("gb0059.html")
        guard = found[("GM601", lines.index("    if scale > 1:") + 1)]  # predicted, and met by the run
        assert guard["guard"] == "scale == 1" and guard["run"]["count"] >= 1 and guard["run"]["kind"] == "recompile"
        branch = found[("GM101", lines.index("    if x.sum() > 0:") + 1)]
        assert branch["run"]["count"] >= 1 and branch["fix"]["applicability"] == "safe"
        assert main(["fix", "prog.py"]) == 1  # the recompile and the library's print remain
        fixed = (tmp_path / "prog.py").read_text()
        assert "_exact_where(cond, x + 1, x * 0.5)" in fixed and "if x.sum() > 0:" not in fixed
        capsys.readouterr()
        assert main(["check", "--output-format", "json", "prog.py"]) == 1
        assert sorted(f["code"] for f in json.loads(capsys.readouterr().out)) == ["GM501", "GM601"]
    finally:
        os.chdir(cwd)


NOTEBOOK_CELLS = [
    "import torch\nimport graphmend",
    "def helper(x):\n    if x.sum() > 0:\n        return x + 1\n    return x * 0.5\n\n\ndef apply(fn, x):\n    return fn(x)",
    'stepped = torch.compile(apply, backend="eager")\nwith graphmend.recording():\n    stepped(helper, torch.ones(2))',
]


def test_a_recording_in_a_notebook_puts_its_events_on_the_cells(tmp_path: Path) -> None:
    """`with graphmend.recording():` in a real Jupyter kernel: the break in a cell's helper, which
    compiled code reaches only through an argument, is placed on that cell of the notebook file
    (found by the cell's code), at its line there, with GM101's rewrite."""
    jupyter_client = pytest.importorskip("jupyter_client")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    manager, kernel = jupyter_client.manager.start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        for source in NOTEBOOK_CELLS:
            reply = kernel.execute_interactive(source, timeout=300)
            assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    notebook = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "A model, step by step."}]
        + [
            {"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
            for s in NOTEBOOK_CELLS
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "steps.ipynb").write_text(json.dumps(notebook))
    (result,) = api.check_paths([tmp_path / "steps.ipynb"], jobs=1)
    (finding,) = result.diagnostics
    assert (finding.code, finding.data.cell, finding.range.start.line + 1) == ("GM101", 3, 2)
    assert finding.fix is not None and finding.data.run is not None  # the run shows the cell's function compiled
