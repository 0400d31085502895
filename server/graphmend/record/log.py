"""One process's events, written as they come (JSON Lines), deduplicated, with what later checks need.

A run's file must survive a crash or Ctrl-C, so each line is written and flushed at once: a new
event is one line with its identity, its frames (paths made absolute against the process's
folder), the hash of each frame's file as it was during the run and Dynamo's words; the same event
again is a short line naming it (the reader counts them). The identity is the event's kind, its
break type (or guard, or failure) and its frames' files and lines.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from . import guards, trace
from .placing import Placing
from .trace import Event, Frame

SCHEMA = 1


def event_id(event: Event) -> str:
    """The event's identity within a run and across runs (files and lines, not columns or counts)."""
    text = "\n".join([event.kind, event.gb_type or event.reason, *(f"{f.path}:{f.line}" for f in event.frames)])
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def content_hash(data: bytes) -> str:
    """What a run keeps of a file's content, to tell later whether it changed since."""
    return hashlib.sha256(data).hexdigest()[:16]


def cell_key(source: str) -> str:
    """What names a notebook cell's code in a run and in the notebook file alike: the hash of its
    text without the blank lines and spaces around it (IPython adds some when it compiles a cell)."""
    return content_hash(source.strip().encode("utf-8"))


MAX_COMPILED_CODE = 4096  # code objects a process lists as compiled (its last line stays small)
MAX_SOURCE = 32 << 20  # a larger "source file" is not read (no line is quoted from it, no hash kept)


def file_hash(path: str) -> str | None:
    return SOURCES_ANYWHERE.hash(path)


class Sources:
    """Which files a run's frames may be read from: regular files of at most `MAX_SOURCE` bytes
    (never a device or a FIFO), under one of `roots` when given (a trace made elsewhere names any
    path: only the project's and the interpreter's own files are read)."""

    def __init__(self, roots: tuple[Path, ...] | None = None) -> None:
        self.roots = tuple(os.path.realpath(r) for r in roots) if roots is not None else None
        self._allowed: dict[str, bool] = {}

    def allowed(self, path: str) -> bool:
        if path not in self._allowed:
            self._allowed[path] = self._check(path)
        return self._allowed[path]

    def _check(self, path: str) -> bool:
        if path.startswith("<") or "\0" in path:
            return False
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE:
            return False
        real = os.path.realpath(path)
        return self.roots is None or any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)

    def line(self, path: str, number: int) -> str:
        return linecache.getline(path, number).strip() if self.allowed(path) else ""

    def lines(self, path: str) -> list[str] | None:
        if not self.allowed(path):
            return None
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None

    def hash(self, path: str) -> str | None:
        if not self.allowed(path):
            return None
        try:
            return content_hash(Path(path).read_bytes())
        except OSError:
            return None


NO_COMPILE = "None/None"  # the compile id of a text-log message written outside any compile

SOURCES_ANYWHERE = Sources()  # the recorder in the user's process: its frames are its own code


class EventLog:
    """The normaliser of one process's trace records, and its JSONL file."""

    def __init__(
        self, path: Path, torch_version: Callable[[], str | None] = lambda: None, roots: tuple[Path, ...] | None = None
    ) -> None:
        self.path = path
        self.sources = Sources(roots) if roots is not None else SOURCES_ANYWHERE
        self._torch_version = torch_version
        self._out: IO[str] | None = None
        self._pid = os.getpid()  # the process `path` is for
        self._seen: set[str] = set()
        self._hashes: dict[str, str | None] = {}
        self._registry: dict[str, str] | None = None
        self._waiting: dict[str, list[Event]] = {}  # compile id → its recompiles, until its metrics
        self._failed_at: dict[str, tuple[Frame, ...]] = {}  # compile id → its failure's user stack
        self._structured: dict[str, set[tuple[str, str, int]]] = {}  # compile id → what its records gave
        self._text: dict[str, list[tuple[str, str]]] = {}  # compile id → its text-log messages
        self._stacks: dict[tuple[str, str, int], tuple[Frame, ...]] = {}  # a text-log break → its stack
        self.counts: dict[str, int] = {}
        self.compiles = 0  # compiles whose metrics came (the run's reader: did it compile at all)
        # the code it compiled, "path:first line" (a predicted recompile the run did not meet is told
        # apart from code the run never compiled)
        self.compiled: set[str] = set()
        self.placing = Placing(
            self.sources.allowed, self.sources.lines
        )  # where a recompile without the user's stack goes

    # ------------------------------------------------------------------ records in
    def record(self, metadata: dict[str, Any], payload: str | None) -> None:
        """One structured-trace record (the logger's `metadata` and `payload`); others are ignored."""
        compile_id = f"{metadata.get('frame_id')}/{metadata.get('frame_compile_id')}"
        artifact = metadata.get("artifact")
        name = artifact.get("name") if isinstance(artifact, dict) else None
        if name == "dynamo_graph_break_reason" and payload:
            event = trace.graph_break(payload, compile_id, self._gb_registry())
            self._structured.setdefault(compile_id, set()).add(_site(event))
            self.add(event)
        elif name == "recompile_reasons" and payload:
            self._structured.setdefault(compile_id, set()).add((trace.RECOMPILE, "", 0))
            # the guard's own stack starts in the compiled code: the call that led there comes with
            # the compile's metrics (a library's function recompiling is placed at the user's call)
            self._waiting.setdefault(compile_id, []).append(trace.recompile_reasons(payload, compile_id))
        elif name == "dynamo_error" and payload:  # a failed compile's exception: its user stack
            self._failed_at[compile_id] = trace.user_code_frames(payload)
        else:
            metrics = metadata.get("compilation_metrics") or metadata.get("bwd_compilation_metrics")
            if isinstance(metrics, dict):
                self.compiles += 1
                code = trace.code_frames(metrics)
                if len(self.compiled) < MAX_COMPILED_CODE:
                    self.compiled.update(f"{frame.path}:{frame.line}" for frame in code)
                calls = tuple(self._quoted(frame) for frame in trace.call_frames(metrics))
                for event in self._waiting.pop(compile_id, []):
                    placed = self.placing.like_before(event, code)
                    self.add(replace(placed, frames=calls + placed.frames))
                for event in trace.from_metrics(metrics, compile_id, self._failed_at.pop(compile_id, ())):
                    if event.kind == trace.CUDAGRAPH_SKIP:  # the same skip's warning is not a second one
                        self._structured.setdefault(compile_id, set()).add((trace.CUDAGRAPH_SKIP, "", 0))
                    self.add(
                        replace(event, frames=calls + event.frames) if event.kind == trace.COMPILE_FAILURE else event
                    )
                self._settle(compile_id, calls)

    def text(self, artifact: str, message: str, compile_id: str) -> None:
        """A message of the `graph_breaks`, `recompiles` or `cudagraphs` text log, kept until its
        compile's metrics: used only where no structured record of its kind came for that compile
        (and, for a break, that site), as in a release that lacks the record. A CUDA-graph skip met
        while a graph runs belongs to no compile: it is an event at once."""
        if artifact == "cudagraphs" and compile_id == NO_COMPILE:
            self.add(trace.cudagraph_skip(message, ""))
            return
        self._text.setdefault(compile_id, []).append((artifact, message))

    def _settle(self, compile_id: str, calls: tuple[Frame, ...] = ()) -> None:
        """The compile's text-log messages that no structured record stood for, as events; a
        recompile under the `calls` that led to the compiled code, as a record's would be."""
        came = self._structured.pop(compile_id, set())
        for artifact, message in self._text.pop(compile_id, []):
            if artifact == "graph_breaks":
                event = self._with_stack(trace.graph_break_text(message, compile_id, self._gb_registry()))
                if _site(event) not in came:
                    self.add(event)
            elif artifact == "cudagraphs":
                if (trace.CUDAGRAPH_SKIP, "", 0) not in came:
                    self.add(trace.cudagraph_skip(message, compile_id))
            elif (trace.RECOMPILE, "", 0) not in came:
                code, recompile = trace.recompiles_text(message, compile_id)
                if recompile is not None:
                    placed = (
                        self.placing.like_before(recompile, code) if code else self.placing.without_metrics(recompile)
                    )
                    self.add(replace(placed, frames=calls + placed.frames))

    def _with_stack(self, event: Event) -> Event:
        """The text log gives a repeated break's site alone: it takes the stack the first one gave."""
        if not event.frames:
            return event
        key = (event.gb_type or event.reason, event.frames[-1].path, event.frames[-1].line)
        if len(event.frames) > 1:
            self._stacks[key] = event.frames
            return event
        return replace(event, frames=self._stacks.get(key, event.frames))

    def add(self, event: Event) -> None:
        """Write the event (or that it happened again)."""
        cwd = os.getcwd()
        event = replace(event, frames=tuple(replace(f, path=_absolute(f.path, cwd)) for f in event.frames))
        identity = event_id(event)
        self.counts[event.kind] = self.counts.get(event.kind, 0) + 1
        if identity in self._seen:
            self._write({"again": identity})
            return
        self._seen.add(identity)
        event = replace(event, frames=tuple(self._quoted(f) for f in event.frames))
        carried = self._carried(event)
        if carried is not None:
            event = replace(event, extra={**event.extra, "carried": carried})
        files = {f.path: self._hash(f.path) for f in event.frames}
        self._write(
            {
                "id": identity,
                "kind": event.kind,
                "reason": event.reason,
                "gb_type": event.gb_type,
                "gb_id": event.gb_id,
                "compile_id": event.compile_id,
                "stack": event.stack,
                **event.extra,
                "frames": [_frame_json(f) for f in event.frames],
                "files": files,
            }
        )

    def close(self) -> None:
        """Write what waits for metrics that never came (a crash mid-compile), and the process's
        last line: how many compiles it made (a process that met nothing has its header and it)."""
        for events in self._waiting.values():
            for event in events:
                self.add(self.placing.without_metrics(event))
        self._waiting.clear()
        for compile_id in list(self._text):
            self._settle(compile_id)
        self._write({"closed": {"compiles": self.compiles, "compiled": sorted(self.compiled)}})
        if self._out is not None:
            self._out.close()
            self._out = None

    # ------------------------------------------------------------------ out
    def _write(self, line: dict[str, Any]) -> None:
        if self._pid != os.getpid():  # a forked child: a file of its own
            self._out = None
            self._seen.clear()
            self._pid = os.getpid()
            self.path = self.path.with_name(f"process-{self._pid}.jsonl")
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115  (kept open for the run)
            self._out.write(json.dumps({"header": self._header()}) + "\n")
        self._out.write(json.dumps(line) + "\n")

    def _header(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "torch": self._torch_version(),
            "python": sys.version.split()[0],
            "pid": os.getpid(),
            "rank": os.environ.get("RANK"),
            "argv": list(sys.argv),
            "cwd": os.getcwd(),
            "started": time.time(),
        }

    def _hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = self.sources.hash(path)
        return self._hashes[path]

    def _carried(self, event: Event) -> str | None:
        """For a guard on a value Dynamo carried across a graph break (`___stack0`), the name the
        break's line gave it in the user's code (read from the line the resume function names)."""
        guard = event.extra.get("guard", "")
        if event.kind != trace.RECOMPILE or not guards.names_carried(guard):
            return None
        for frame in reversed(event.frames):
            line = guards.resume_break_line(frame.func)
            if line is not None:
                return guards.carried_name(self.sources.line(frame.path, line))
        return None

    def _quoted(self, frame: Frame) -> Frame:
        """The frame with its source line's text, read from the file when the record quoted none (a
        compile failure's frame, the calls metrics name): what finds the line again after an edit
        (`runs.current_line`)."""
        if frame.text or frame.path.startswith("<"):
            return frame
        return replace(frame, text=self.sources.line(frame.path, frame.line))

    def _gb_registry(self) -> dict[str, str]:
        """Break type → gb id, from the registry of the torch this process runs (when loaded)."""
        if self._registry is None:
            self._registry = {}
            torch = sys.modules.get("torch")
            where = getattr(torch, "__file__", None)
            if where:
                try:
                    raw = json.loads((Path(where).parent / "_dynamo" / "graph_break_registry.json").read_text("utf-8"))
                    self._registry = trace.registry_by_type(raw)
                except (OSError, ValueError):
                    pass
        return self._registry


def _frame_json(frame: Frame) -> dict[str, Any]:
    """A frame as written; one in a notebook cell (code IPython compiled under a name that is no
    file, its text in `linecache`) also names the cell's code (`cell_key`), which finds the
    cell in the notebook file."""
    written: dict[str, Any] = {"path": frame.path, "line": frame.line, "func": frame.func, "text": frame.text}
    cached = linecache.cache.get(frame.path)
    if cached is not None and len(cached) == 4 and cached[1] is None and not os.path.exists(frame.path):
        written["cell"] = cell_key("".join(cached[2]))
    return written


def _site(event: Event) -> tuple[str, str, int]:
    """What a text-log message is matched on: a break's innermost frame, a compile's recompile."""
    frame = event.frames[-1] if event.frames and event.kind == trace.GRAPH_BREAK else None
    return (event.kind, frame.path, frame.line) if frame else (event.kind, "", 0)


def _absolute(path: str, cwd: str) -> str:
    """A traceback's path as a file on disk: relative ones against the process's folder; names such
    as `<frozen runpy>` stay as they are."""
    if path.startswith("<") or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(cwd, path))
