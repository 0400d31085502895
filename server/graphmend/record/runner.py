"""`graphmend record`: run a command unchanged with the recorder in each of its Python processes,
or read a TORCH_TRACE folder from a run made elsewhere, into a run folder.

The command runs in a process group of its own, so that a signal meant for the run reaches all of
it and only it: Ctrl-C, SIGTERM and SIGHUP sent to graphmend are passed to the group (a terminal's
Ctrl-C reaches graphmend alone once the command has the terminal), and graphmend dying (even by
SIGKILL) ends the command too (Linux: the parent-death signal). The exit code is the command's,
128 + N when a signal N ended it, as a shell says it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import untrusted
from .log import EventLog
from .runs import finish_run, library_roots, new_run, project_root

BOOT = Path(__file__).parent / "boot"
LIBRARY = Path(__file__).resolve().parents[2]  # the folder holding the graphmend package
# Process groups, the terminal and the parent-death signal; elsewhere the command runs as before.
POSIX = os.name == "posix"
FORWARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
MAX_TRACE_LINE = 8 << 20  # a trace line longer than this is no record graphmend reads (skipped)
MAX_PAYLOAD = 4 << 20  # of a payload graphmend reads, what is kept (a break's or a failure's text is far less)
WANTED = {"dynamo_graph_break_reason", "recompile_reasons", "dynamo_error"}  # artifacts whose payload is read


def record_command(command: list[str], run: Path | None = None, root: Path | None = None) -> tuple[int, Path]:
    """Run `command` (its own stdin, stdout and stderr) with the recorder; returns its exit code
    and the run folder, which becomes visible to the analyses when its run.json is written."""
    run = run if run is not None else new_run(root or Path.cwd())
    run.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *filter(None, [env.get("PYTHONPATH")])])
    env["GRAPHMEND_RECORD_DIR"] = str(run.resolve())
    env["GRAPHMEND_RECORD_LIB"] = str(LIBRARY)
    started = time.time()
    terminal = _terminal_fd() if POSIX else None
    try:
        process = subprocess.Popen(command, env=env, preexec_fn=in_own_group(terminal) if POSIX else None)  # noqa: PLW1509
    except OSError as error:
        finish_run(run, command, started, None, f"cannot start the command: {error.strerror or error}")
        raise
    if not POSIX:
        code = _wait(process)
    else:
        with forwarding(process.pid), _terminal(terminal, process.pid):
            code = _wait(process)
    finish_run(run, command, started, code)
    return code, run


def exit_code(returncode: int) -> int:
    """A process's exit code as a shell gives it: 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def _wait(process: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return exit_code(process.wait())
        except KeyboardInterrupt:  # Ctrl-C reached graphmend too: the command got it, let it end its way
            continue


@contextlib.contextmanager
def forwarding(pid: int, received: list[int] | None = None) -> Iterator[None]:
    """Signals sent to graphmend, passed to the command's process group while it runs (and noted
    in `received`, for a caller that stops after the command ends)."""

    def forward(number: int, _frame: object) -> None:
        if received is not None:
            received.append(number)
        with contextlib.suppress(OSError):
            os.killpg(pid, number)

    previous = {}
    try:
        for number in FORWARDED:
            previous[number] = signal.signal(number, forward)
    except ValueError:  # not the main thread (an API caller's): signals reach the process as they are
        pass
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def _terminal(fd: int | None, pid: int) -> Iterator[None]:
    """The terminal `fd` given to the command's group while it runs, when graphmend has it (so the
    command reads its input and gets Ctrl-C as it would unrecorded), and taken back after."""
    try:
        previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN) if fd is not None else None  # to take it back
    except ValueError:  # not the main thread: the terminal stays as it is
        fd = None
    if fd is None:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pid)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, os.getpgrp())
        signal.signal(signal.SIGTTOU, previous)


def _terminal_fd() -> int | None:
    """Standard input's descriptor when it is the terminal whose foreground graphmend is."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (OSError, ValueError, AttributeError):
        return None


def in_own_group(terminal: int | None = None) -> Callable[[], None]:
    """What the command's process does before it starts: make a process group of its own, end with
    SIGTERM when graphmend dies (Linux), and take the terminal itself, as a shell's job does, so
    that it never reads from it before graphmend has handed it over."""

    def prepare() -> None:
        os.setpgid(0, 0)
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if terminal is not None:
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            with contextlib.suppress(OSError):
                os.tcsetpgrp(terminal, os.getpgrp())
            signal.signal(signal.SIGTTOU, previous)

    return prepare


def import_trace(folder: Path, run: Path, roots: tuple[Path, ...] | None = None) -> Path:
    """A TORCH_TRACE folder (one `dedicated_log_torch_trace_*.log` per process or rank) read with
    the normaliser the recorder uses: the same events as recording the run would give. Only regular
    files are read, line by line; source lines only from files under `roots` (default: the project
    of the working folder and the interpreter's library folders)."""
    roots = roots if roots is not None else (project_root(Path.cwd()), *library_roots())
    logs = sorted(folder.glob("*.log")) if folder.is_dir() else [folder]
    for number, log_file in enumerate(logs):
        log = EventLog(run / f"process-trace{number}.jsonl", roots=roots)
        for metadata, payload in trace_records(log_file):
            log.record(metadata, payload)
        log.close()
    finish_run(run, ["import-trace", str(folder)], time.time(), 0)
    return run


def trace_records(path: Path) -> Iterator[tuple[dict[str, Any], str | None]]:
    """A TORCH_TRACE log's records, streamed: a glog prefix, "] ", the metadata as JSON, then the
    payload's lines, each starting with a tab (kept only for the artifacts graphmend reads). Nothing
    from a file that is not a regular file (a FIFO, a device)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return
        lines = open(path, "rb")  # noqa: SIM115  (closed below)
    except OSError:
        return
    with lines:
        metadata: dict[str, Any] | None = None
        payload: list[str] | None = None
        size = 0
        for raw in lines:
            if len(raw) > MAX_TRACE_LINE:
                continue
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("\t"):
                size += len(line)
                if payload is not None and size <= MAX_PAYLOAD:
                    payload.append(line[1:])
                continue
            if metadata is not None:
                yield metadata, "\n".join(payload) if payload else None
            metadata, payload, size = _metadata(line), None, 0
            artifact = metadata.get("artifact") if metadata is not None else None
            if isinstance(artifact, dict) and artifact.get("name") in WANTED:
                payload = []
        if metadata is not None:
            yield metadata, "\n".join(payload) if payload else None


def _metadata(line: str) -> dict[str, Any] | None:
    _, _, rest = line.partition("] ")
    try:
        found = untrusted.loads(rest)  # bounded nesting: a line nested 200,000 deep is no record (issue 68)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


__all__ = ["exit_code", "import_trace", "record_command"]
