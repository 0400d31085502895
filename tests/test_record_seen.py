"""What a user sees after `graphmend record` (issue 53), each point run for real under torch 2.13.0:
every library line one call broke at, in `related` with its count; a recompile at a line with a
static finding reported apart (GM502), the finding confirmed by breaks alone; a compile failure
raised inside a library kept at the user's line; a 2.13 shape guard whose comment names torch's
own line never placed at a file that is not there; advice in the user's names only; a baseline
that holds across an added line and a changed batch size; a failed record and two concurrent
records that hide no good run; and the command's signals and exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmend import api

pytest.importorskip("torch")

FOUR_BREAKS_LIB = """\
def report(x):
    print("mean", x.mean())
    print("max", x.max())
    print("min", x.min())
    print("shape", x.shape)
    return x * 2
"""

FOUR_BREAKS = """\
import torch
import fourlib


@torch.compile(backend="eager")
def step(x):
    x = x + 1
    x = fourlib.report(x)
    return x - 1


for _ in range(2):
    step(torch.ones(3))
"""  # the user's call: line 8; the library's breaks: fourlib/__init__.py lines 2 to 5

RECOMPILE_AT_A_BREAK = """\
import torch


@torch.compile(backend="eager")
def scaled(x, limit):
    x = x * 2
    if x.sum() > limit:
        return x + 1
    return x - 1


for limit in (1, 2, 3):
    scaled(torch.ones(4), limit)
"""  # line 7: a data-dependent `if` (GM101) whose int also makes the guard `limit == 1`

FAILING_LIB = """\
import inspect


def log(x):
    frame = inspect.currentframe()
    return x + 1
"""

FAILS_IN_A_LIBRARY = """\
import torch
import faillib


def training_step(x):
    y = x * 2
    y = faillib.log(y)
    return y


step = torch.compile(training_step, backend="eager", fullgraph=True)
try:
    step(torch.ones(3))
except Exception as error:
    print("failed:", type(error).__name__)
"""  # the user's line: 7 (the library raises in `inspect.py`)

SHAPES = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 3, 3, padding=1)

    def forward(self, batch):
        return self.conv(batch).relu()


net = torch.compile(Net(), backend="eager")
for n in (8, 9, 10, 3, 1):
    net(torch.ones(2, 2, n))
"""  # 8 → 9: a size recompile (then dynamic); 1: torch's 0/1 specialization, made in conv.py

NAMES = """\
import torch

EXPLORE = 0.5


@torch.compile(backend="eager")
def step(x, flag, lr):
    y = x * EXPLORE
    if flag:
        y = y + 1
    return y * lr


class Encoder(torch.nn.Module):
    def forward(self, x):
        print("encoding")
        return {"scale": x.shape[0] * 2.5, "hidden": x}


@torch.compile(backend="eager")
def encode(batch):
    out = Encoder()(batch)
    return out["hidden"] * out["scale"]


for i in range(3):
    step(torch.ones(3), i % 2 == 0, 0.1 * i)
    encode(torch.ones(i + 2))
"""  # Dynamo's names: L['flag'], L['lr'], ___stack0 (the break's `out`, line 22)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def with_library(tmp_path: Path, program: str, package: str, library: str) -> tuple[Path, Path]:
    """A project (`tmp_path/p`, its `prog.py`) and, beside it, a site folder holding the installed
    package `package` (its `__init__.py`): a library outside the project, as an installed one is."""
    site = tmp_path / "site"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(library)
    return project(tmp_path / "p", {"prog.py": program}), site


def newest_run(root: Path) -> api.Run:
    """The project's newest run, as `graphmend record` left it."""
    return api.read_run(max((root / ".graphmend" / "runs").iterdir()))


def record(root: Path, *command: str, site: Path | None = None, **options: object) -> subprocess.CompletedProcess:
    """`graphmend record -- COMMAND` in `root` (a library folder `site` on the program's path)."""
    env = {**os.environ, **({"PYTHONPATH": str(site)} if site else {})}
    return subprocess.run(
        [sys.executable, "-m", "graphmend", "record", "--", *command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **options,  # type: ignore[call-overload]
    )


def check(root: Path, *paths: str, options: tuple[str, ...] = ()) -> list[dict]:
    """`check --output-format json` of `paths` in `root`, as the user runs it after the record."""
    found = subprocess.run(
        [
            sys.executable,
            *("-m", "graphmend", "check", "--no-cache", "--output-format", "json", "--exit-zero"),
            *options,
            *paths,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr
    return json.loads(found.stdout)


def test_one_call_reaching_four_library_breaks_names_all_four_with_their_counts(tmp_path: Path) -> None:
    root, site = with_library(tmp_path, FOUR_BREAKS, "fourlib", FOUR_BREAKS_LIB)
    done = record(root, sys.executable, "prog.py", site=site)
    assert done.returncode == 0, done.stderr
    (finding,) = [f for f in check(root, "prog.py") if f["line"] == 8]
    assert finding["code"] == "GM501"
    library = {(Path(r["path"]).name, r["line"]): r["message"] for r in finding["related"]}
    assert set(library) == {("__init__.py", line) for line in (2, 3, 4, 5)}, finding["related"]
    run = newest_run(root)
    for (_, line), message in library.items():
        met = sum(e.count for e in run.events if e.frames[-1]["line"] == line and "fourlib" in e.frames[-1]["path"])
        assert message.endswith(f"({met} times)" if met > 1 else "`report`"), (line, met, message)
    assert finding["run"]["kind"] == "graph_break"
    text = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "--no-cache", "--exit-zero", "prog.py"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    assert "fourlib/__init__.py:5)" in text  # the text output names the library lines


def test_a_recompile_at_a_line_with_a_static_finding_is_reported_apart(tmp_path: Path) -> None:
    root = project(tmp_path, {"prog.py": RECOMPILE_AT_A_BREAK})
    assert record(root, sys.executable, "prog.py").returncode == 0
    at_line = [f for f in check(root, "prog.py") if f["line"] == 7]
    by_code = {f["code"]: f for f in at_line}
    assert set(by_code) == {"GM101", "GM601"}, at_line  # the recompile is predicted: GM601, confirmed
    run = newest_run(root)
    breaks = sum(e.count for e in run.events if e.kind == "graph_break" and e.frames[-1]["line"] == 7)
    recompiles = sum(e.count for e in run.events if e.kind == "recompile")
    assert by_code["GM101"]["run"] == {**by_code["GM101"]["run"], "count": breaks, "kind": "graph_break"}
    assert by_code["GM601"]["run"]["count"] == recompiles >= 1 and by_code["GM601"]["run"]["kind"] == "recompile"
    unpredicted = {f["code"]: f for f in check(root, "prog.py", options=("--ignore", "GM6")) if f["line"] == 7}
    assert set(unpredicted) == {"GM101", "GM502"} and "`limit`" in unpredicted["GM502"]["message"]


def test_a_compile_failure_raised_inside_a_library_keeps_the_users_line(tmp_path: Path) -> None:
    root, site = with_library(tmp_path, FAILS_IN_A_LIBRARY, "faillib", FAILING_LIB)
    done = record(root, sys.executable, "prog.py", site=site)
    assert "failed: Unsupported" in done.stdout, done.stderr
    (finding,) = check(root, "prog.py")
    assert (finding["code"], finding["line"]) == ("GM503", 7), finding
    assert {Path(r["path"]).name for r in finding["related"]} == {"inspect.py"}


def test_a_shape_guard_in_the_2_13_format_never_names_a_missing_file(tmp_path: Path) -> None:
    root = project(tmp_path, {"prog.py": SHAPES})
    assert record(root, sys.executable, "prog.py").returncode == 0
    run = newest_run(root)
    recompiles = [e for e in run.events if e.kind == "recompile"]
    assert len(recompiles) == 2, [e.reason for e in recompiles]  # one per recompile, not one per cached compile
    for event in recompiles:
        assert all(Path(f["path"]).is_file() for f in event.frames), event.frames
    found = {f["message"]: f for f in check(root, "prog.py")}
    assert all(f["line"] == 9 for f in found.values()), found  # `def forward`
    severities = sorted(f["severity"] for f in found.values())
    assert severities == ["information", "information"], found  # each happened once, as torch does by design
    # the size that changes is predicted (GM605, confirmed); the size kept at 0 or 1 is the run's alone
    assert sorted(f["code"] for f in found.values()) == ["GM502", "GM605"], found
    special = next(f for m, f in found.items() if "0 or 1" in m)
    assert any(r["path"].endswith("torch/nn/modules/conv.py") for r in special["related"])


def test_a_guard_comment_in_the_2_13_format_is_read_at_its_own_line() -> None:
    """torch 2.13's comment adds where the size was made (`(_subclasses/fake_impls.py:...)`): the
    site is the line before it, its path shortened against torch's folder."""
    from graphmend.record import trace

    comment = (
        "[\"0/1: 2 <= L['batch'].size()[2]  # return F.conv1d(  # nn/modules/conv.py:560 in _conv_forward "
        '(_subclasses/fake_impls.py:1158 in conv)"]'
    )
    event = trace.recompile_reasons(comment, "0/2")
    assert [(f.path, f.line, f.func) for f in event.frames] == [("nn/modules/conv.py", 560, "_conv_forward")]


def test_the_advice_names_only_the_users_values(tmp_path: Path) -> None:
    root = project(tmp_path, {"prog.py": NAMES})
    assert record(root, sys.executable, "prog.py").returncode == 0
    found = [f for f in check(root, "prog.py", options=("--ignore", "GM6")) if f["code"] == "GM502"]
    assert found, "no recompile recorded"
    for finding in found:
        words = finding["message"]
        assert not any(internal in words for internal in ("___stack", "L[", "G[", "__import_", "its `")), words
    flag = next(f for f in found if "`flag`" in f["message"])
    assert "tensor" not in flag["message"] and "dynamic=True" not in flag["message"]
    assert any("`out['scale']` a tensor" in f["message"] for f in found), [f["message"] for f in found]


GATED = """\
import sys

import torch


@torch.compile(backend="eager")
def step(x, lr):
    y = x * 2
    print("step")
    return y * lr


batch, lr = int(sys.argv[1]), float(sys.argv[2])
for _ in range(2):
    for n in (batch, batch + 2):
        step(torch.ones(n), lr)
"""


def test_the_baseline_holds_across_an_added_line_and_a_changed_batch_size(tmp_path: Path) -> None:
    root = project(tmp_path, {"prog.py": GATED})
    gate = [sys.executable, "-m", "graphmend", "record", "--baseline", "gm.json"]
    wrote = subprocess.run([*gate, "--write-baseline", "--", sys.executable, "prog.py", "4", "0.1"], cwd=root)
    assert wrote.returncode == 0
    written = json.loads((root / "gm.json").read_text())["events"]
    assert {e["kind"] for e in written} >= {"graph_break", "recompile"}, written
    (root / "prog.py").write_text("# a comment added at the top\n" + GATED)
    held = subprocess.run(
        [*gate, "--", sys.executable, "prog.py", "6", "0.2"], cwd=root, capture_output=True, text=True
    )
    assert held.returncode == 0, held.stderr
    assert "nothing new" in held.stderr


def test_a_failed_record_and_two_concurrent_records_hide_no_good_run(tmp_path: Path) -> None:
    root = project(tmp_path, {"prog.py": FOUR_BREAKS.replace("fourlib.report(x)", "x").replace("import fourlib\n", "")})
    (root / "a.py").write_text(RECOMPILE_AT_A_BREAK + "import time\ntime.sleep(2)\n")
    first = check(root, "a.py")
    assert not any("run" in f for f in first)
    started = []
    for name in ("a.py", "prog.py"):  # prog.py starts later: the newest run, and it meets nothing
        command = [sys.executable, "-m", "graphmend", "record", "--", sys.executable, name]
        started.append(subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE))
        time.sleep(1.5)
    assert [p.wait(timeout=300) for p in started] == [0, 0]
    assert any(f.get("run") for f in check(root, "a.py")), "the first of two concurrent runs is hidden"
    broken = record(root, sys.executable, "-c", "import sys; sys.exit(3)")
    assert broken.returncode == 3
    assert any(f.get("run") for f in check(root, "a.py")), "a record that failed at once hid the good run"
    missing = record(root, sys.executable, "no_such_script.py")
    assert missing.returncode == 2
    assert any(f.get("run") for f in check(root, "a.py")), "a record of a missing script hid the good run"


def test_signals_reach_the_command_and_its_exit_code_is_the_shells(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    killed = record(root, sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed.returncode == 128 + signal.SIGKILL
    marker = root / "started"
    sleeper = f"import pathlib, time; pathlib.Path({str(marker)!r}).touch(); time.sleep(60)"
    for number in (signal.SIGTERM, signal.SIGINT):
        marker.unlink(missing_ok=True)
        process = subprocess.Popen(
            [sys.executable, "-m", "graphmend", "record", "--", sys.executable, "-c", sleeper],
            cwd=root,
            stderr=subprocess.PIPE,
        )
        for _ in range(300):
            if marker.exists():
                break
            time.sleep(0.1)
        process.send_signal(number)
        assert process.wait(timeout=60) == 128 + number
    folders = sorted((root / ".graphmend" / "runs").iterdir())
    assert all((f / "run.json").is_file() for f in folders)


def test_the_command_ends_when_graphmend_is_killed(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    pid_file = root / "pid"
    sleeper = f"import os, pathlib, time; pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    process = subprocess.Popen(
        [sys.executable, "-m", "graphmend", "record", "--", sys.executable, "-c", sleeper], cwd=root
    )
    for _ in range(300):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    child = int(pid_file.read_text())
    process.kill()
    process.wait(timeout=30)
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the command outlived graphmend record")


def test_a_project_it_cannot_write_names_the_runs_folder(tmp_path: Path) -> None:
    """A project where `.graphmend/runs` cannot be made (read-only; here a file in its way, which
    stops root too): the error names the folder, not the command."""
    root = project(tmp_path, {})
    (root / ".graphmend").write_text("not a folder")
    done = record(root, sys.executable, "-c", "pass")
    assert done.returncode == 2 and ".graphmend/runs" in done.stderr and "cannot run" not in done.stderr, done.stderr


SWITCHED_LIB = """\
def encode(x, verbose=True, cache=None):
    y = x * 2
    if verbose or cache is not None:
        print("encoding", y.shape)
    return y + 1
"""

SWITCHED = """\
import torch
import switchlib


@torch.compile(backend="eager")
def step(x):
    return switchlib.encode(x) - 1


step(torch.ones(3))
"""


def test_a_library_break_names_the_librarys_own_switch(tmp_path: Path) -> None:
    """The conditions around the library's line, read back to the keywords of the function the
    user's call enters: `verbose=False` (and `cache` left unset) avoids the print; with it, a new
    record meets nothing."""
    root, site = with_library(tmp_path, SWITCHED, "switchlib", SWITCHED_LIB)
    assert record(root, sys.executable, "prog.py", site=site).returncode == 0
    (finding,) = check(root, "prog.py")
    assert finding["code"] == "GM501" and finding["fix"] is None
    assert finding["message"].startswith("Pass `verbose=False` in this call (and leave `cache` unset)"), finding
    (root / "prog.py").write_text(SWITCHED.replace("switchlib.encode(x)", "switchlib.encode(x, verbose=False)"))
    assert record(root, sys.executable, "prog.py", site=site).returncode == 0
    assert check(root, "prog.py") == []


def test_the_escape_hatch_takes_a_library_call_out_of_the_graph(tmp_path: Path) -> None:
    """With no switch in the library, the unsafe fix disables the callee at the call: recorded
    again, the four breaks inside the library are one break at the user's call."""
    root, site = with_library(tmp_path, FOUR_BREAKS, "fourlib", FOUR_BREAKS_LIB)
    assert record(root, sys.executable, "prog.py", site=site).returncode == 0
    (finding,) = check(root, "prog.py")
    assert finding["fix"]["applicability"] == "unsafe" and "torch.compiler.disable" in finding["fix"]["title"]
    assert any("at 4 lines become one" in hazard for hazard in finding["fix"]["hazards"]), finding["fix"]
    fixed = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", "--unsafe-fixes", "prog.py"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert "x = torch.compiler.disable(fourlib.report)(x)" in (root / "prog.py").read_text(), fixed.stderr
    assert record(root, sys.executable, "prog.py", site=site).returncode == 0
    run = newest_run(root)
    sites = {(Path(e.frames[-1]["path"]).name, e.frames[-1]["line"]) for e in run.events if e.kind == "graph_break"}
    assert sites == {("prog.py", 8)}, sites


def test_guards_are_said_in_the_users_names_and_kept_without_their_values() -> None:
    """`guards.spoken` and `guards.identity` on the forms torch 2.9 to 2.14 write; GM502's advice
    for each kind reads as a sentence."""
    from graphmend.record import guards
    from graphmend.record.runs import RecordedEvent
    from graphmend.rules.gm502_recorded_recompile import advice

    assert guards.spoken("G['__import___main__'].EXPLORE == 0.1") == "EXPLORE == 0.1"
    assert guards.spoken("__import_torch_dot_nn.functional.x == 1") == "torch.nn.functional.x == 1"
    assert guards.spoken("___stack0['scale'] == 5.0", carried="out") == "out['scale'] == 5.0"
    assert guards.identity("lr == 0.1") == guards.identity("lr == 0.2") == "lr == …"
    assert guards.identity("tensor 'x' size mismatch at index 0. expected 4, actual 6") == (
        "tensor 'x' size mismatch at index 0"
    )
    assert guards.identity("___check_obj_id(L['fn'], 140234234)") == "___check_obj_id(fn, …)"
    assert guards.carried_name("out = self.encoder(x)  # the break") == "out"
    assert guards.carried_name("return self.encoder(x)") is None
    assert guards.resumed_function("torch_dynamo_resume_in_forward_at_18") == "forward"

    def said(guard: str, carried: str | None = None) -> str:
        return advice(RecordedEvent("1", "recompile", "", [], {}, guard=guard, carried=carried))

    assert said("tensor 'x' requires_grad mismatch. expected requires_grad=0") == (
        "Pass `x` with the same `requires_grad` on every call"
    )
    assert (
        said("tensor 'x' stride mismatch at index 0") == "Pass `x` with the same layout (`.contiguous()`) on every call"
    )
    assert said("L['flag'] == True").startswith("Expect one compile per value of `flag`")
    assert said("L['n'] == 3") == "Pass `n` as a tensor, or compile with `dynamic=True`"
    assert said("___stack0 == 8.674").startswith("Remove the graph break above this line")
    assert "___" not in said("___stack0['scale'] == 5.0", carried="out")


BLOCK_LIB = """\
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return self.lin(x) * scale
"""

BLOCK_USER = """\
import torch
import blocklib

model = torch.compile(blocklib.Block(), backend="eager")
for n in (2, 3, 5):
    batch = torch.ones(n, 4)
    out = model(batch)
"""


def test_a_library_modules_recompile_names_the_users_value(tmp_path: Path) -> None:
    """A compiled library module recompiles on its `forward(self, x)`: the advice, at the user's
    call, names what the user passes (`batch`), not the library's parameter."""
    root, site = with_library(tmp_path, BLOCK_USER, "blocklib", BLOCK_LIB)
    assert record(root, sys.executable, "prog.py", site=site).returncode == 0
    (predicted,) = check(root, "prog.py")  # the batch's size changes: GM605 predicts it, the run confirms it
    assert (predicted["code"], predicted["line"], predicted["run"]["count"]) == ("GM605", 7, 1), predicted
    (finding,) = check(root, "prog.py", options=("--ignore", "GM6"))
    assert (finding["code"], finding["line"]) == ("GM502", 7)
    assert "`batch`" in finding["message"] and "`x`" not in finding["message"], finding["message"]


def _in_a_terminal(command: list[str], keys: bytes, cwd: Path) -> tuple[int, bytes]:
    """Run `command` as a terminal's foreground job (a pseudo-terminal), type `keys` once it prints
    "ready", and give its exit code and everything it wrote."""
    import pty
    import select

    pid, terminal = pty.fork()
    if pid == 0:  # the child: its own session, the pseudo-terminal as its terminal
        os.chdir(cwd)
        os.execv(command[0], command)
    written, typed, start = b"", False, time.monotonic()
    while time.monotonic() - start < 120:
        if select.select([terminal], [], [], 0.2)[0]:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the terminal closed: the job ended
                break
            if not chunk:
                break
            written += chunk
        if not typed and b"ready" in written:
            os.write(terminal, keys)
            typed = True
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(terminal)
    return os.waitstatus_to_exitcode(status), written


def test_in_a_terminal_the_command_reads_its_input_and_gets_ctrl_c(tmp_path: Path) -> None:
    """The command runs in a process group of its own, given the terminal: it reads what is typed
    (not stopped for reading from the background), and Ctrl-C reaches it (130, as a shell says)."""
    root = project(tmp_path, {})
    record = [sys.executable, "-m", "graphmend", "record", "--", sys.executable, "-c"]
    code, written = _in_a_terminal([*record, "print('ready', flush=True); print(input()[::-1])"], b"abc\n", root)
    assert code == 0 and b"cba" in written, written
    code, written = _in_a_terminal([*record, "import time; print('ready', flush=True); time.sleep(60)"], b"\x03", root)
    assert code == 128 + signal.SIGINT and b"KeyboardInterrupt" in written, (code, written)


def test_a_switch_is_only_a_parameter_that_still_holds_what_is_passed(tmp_path: Path) -> None:
    """The switch read from the library's source: a parameter filled in only when not passed
    (`x = x if x is not None else default`, or under `if x is None:`) still switches; one the
    function overwrites before the line does not (passing it would change nothing). On the
    installed transformers T5, the break at `modeling_t5.py:1019` gives `use_cache=False`."""
    from graphmend.library_advice import library_switch

    library = tmp_path / "switches.py"
    library.write_text(
        "def filled(x, use_cache=None, config=None):\n"
        "    use_cache = use_cache if use_cache is not None else config.use_cache\n"
        "    if use_cache:\n"
        "        print('cache')\n"
        "\n\n"
        "def guarded(x, verbose=None):\n"
        "    if verbose is None:\n"
        "        verbose = True\n"
        "    if verbose:\n"
        "        print('verbose')\n"
        "\n\n"
        "def overwritten(self, x, use_cache=None):\n"
        "    use_cache = True if self.training else use_cache\n"
        "    if use_cache:\n"
        "        print('cache')\n"
    )

    def frame(line: int, func: str) -> dict:
        return {"path": str(library), "line": line, "func": func, "text": ""}

    def switch_at(line: int, func: str) -> str | None:
        found = library_switch((frame(line, func),), frame(line, func))
        return found.words() if found is not None else None

    assert switch_at(4, "filled") == "pass `use_cache=False` in this call"
    assert switch_at(11, "guarded") == "pass `verbose=False` in this call"
    assert switch_at(10, "guarded") is None  # the break is the test itself
    assert switch_at(17, "overwritten") is None
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    source = Path(t5.__file__).read_text().splitlines()
    if source[1018].strip() != "logger.warning_once(":
        pytest.skip("another transformers than 4.49.0")
    entered = {"path": t5.__file__, "line": 1893, "func": "forward", "text": ""}
    broke = {"path": t5.__file__, "line": 1019, "func": "forward", "text": "logger.warning_once("}
    found = library_switch((entered, broke), broke)
    assert (
        found is not None and found.words() == "pass `use_cache=False` in this call (and leave `past_key_values` unset)"
    )
