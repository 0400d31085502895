"""`graphmend record`: run a command unchanged with the recorder in each of its Python processes,
or read a TORCH_TRACE folder from a run made elsewhere, into a run folder."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from .log import EventLog
from .runs import new_run

BOOT = Path(__file__).parent / "boot"
LIBRARY = Path(__file__).resolve().parents[2]  # the folder holding the graphmend package


def record_command(command: list[str], run: Path | None = None, root: Path | None = None) -> tuple[int, Path]:
    """Run `command` (its own stdin, stdout and stderr) with the recorder; returns its exit code
    and the run folder. Ctrl-C reaches the command, and what it met until then is kept."""
    run = run if run is not None else new_run(root or Path.cwd())
    run.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *filter(None, [env.get("PYTHONPATH")])])
    env["GRAPHMEND_RECORD_DIR"] = str(run.resolve())
    env["GRAPHMEND_RECORD_LIB"] = str(LIBRARY)
    started = time.time()
    try:
        process = subprocess.Popen(command, env=env)
    except OSError as error:
        _finish(run, command, started, None, f"cannot start the command: {error.strerror or error}")
        raise
    try:
        code = process.wait()
    except KeyboardInterrupt:  # the child got the same Ctrl-C: let it end its own way
        code = process.wait()
    _finish(run, command, started, code)
    return code, run


def import_trace(folder: Path, run: Path) -> Path:
    """A TORCH_TRACE folder (one `dedicated_log_torch_trace_*.log` per process or rank) read with
    the normaliser the recorder uses: the same events as recording the run would give."""
    logs = sorted(folder.glob("*.log")) if folder.is_dir() else [folder]
    for number, log_file in enumerate(logs):
        log = EventLog(run / f"process-trace{number}.jsonl")
        for metadata, payload in _trace_records(log_file):
            log.record(metadata, payload)
        log.close()
    _finish(run, ["import-trace", str(folder)], time.time(), 0)
    return run


def _trace_records(path: Path) -> list[tuple[dict, str | None]]:
    """A TORCH_TRACE log's records: a glog prefix, "] ", the metadata as JSON, then the payload's
    lines, each starting with a tab."""
    records: list[tuple[dict, list[str]]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("\t"):
            if records:
                records[-1][1].append(line[1:])
            continue
        _, _, rest = line.partition("] ")
        try:
            metadata = json.loads(rest)
        except ValueError:
            continue
        if isinstance(metadata, dict):
            records.append((metadata, []))
    return [(metadata, "\n".join(lines) if lines else None) for metadata, lines in records]


def _finish(run: Path, command: list[str], started: float, code: int | None, error: str | None = None) -> None:
    ended = {"argv": command, "cwd": os.getcwd(), "started": started, "ended": time.time(), "exit_code": code}
    if error is not None:
        ended["error"] = error
    (run / "run.json").write_text(json.dumps(ended, indent=1) + "\n", encoding="utf-8")


__all__ = ["import_trace", "record_command"]
