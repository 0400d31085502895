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
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from . import trace
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


def file_hash(path: str) -> str | None:
    try:
        return content_hash(Path(path).read_bytes())
    except OSError:
        return None


class EventLog:
    """The normaliser of one process's trace records, and its JSONL file."""

    def __init__(self, path: Path, torch_version: Callable[[], str | None] = lambda: None) -> None:
        self.path = path
        self._torch_version = torch_version
        self._out: IO[str] | None = None
        self._pid = os.getpid()  # the process `path` is for
        self._seen: set[str] = set()
        self._hashes: dict[str, str | None] = {}
        self._registry: dict[str, str] | None = None
        self._waiting: dict[str, list[Event]] = {}  # compile id → its recompiles, until its metrics
        self._structured: dict[str, set[tuple[str, str, int]]] = {}  # compile id → what its records gave
        self._text: dict[str, list[tuple[str, str]]] = {}  # compile id → its text-log messages
        self._stacks: dict[tuple[str, str, int], tuple[Frame, ...]] = {}  # a text-log break → its stack
        self.counts: dict[str, int] = {}

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
            self._waiting.setdefault(compile_id, []).extend(trace.recompile_reasons(payload, compile_id))
        else:
            metrics = metadata.get("compilation_metrics") or metadata.get("bwd_compilation_metrics")
            if isinstance(metrics, dict):
                code = trace.code_frames(metrics)
                calls = tuple(_quoted(frame) for frame in trace.call_frames(metrics))
                for event in self._waiting.pop(compile_id, []):
                    placed = event if event.frames and event.stack == "complete" else _placed(event, code)
                    self.add(replace(placed, frames=calls + placed.frames))
                for event in trace.from_metrics(metrics, compile_id):
                    self.add(event)
                self._settle(compile_id, calls)

    def text(self, artifact: str, message: str, compile_id: str) -> None:
        """A message of the `graph_breaks` or `recompiles` text log, kept until its compile's
        metrics: used only where no structured record of its kind came for that compile (and, for
        a break, that site), as in a release that lacks the record."""
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
            elif (trace.RECOMPILE, "", 0) not in came:
                code, events = trace.recompiles_text(message, compile_id)
                for event in events:
                    placed = event if event.frames else _placed(event, code)
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
        event = replace(event, frames=tuple(_quoted(f) for f in event.frames))
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
        """Write what waits for metrics that never came (a crash mid-compile), and the header of a
        process that met nothing."""
        for events in self._waiting.values():
            for event in events:
                self.add(event if event.frames else replace(event, stack="incomplete"))
        self._waiting.clear()
        for compile_id in list(self._text):
            self._settle(compile_id)
        if self._out is None:
            self._write(None)
        if self._out is not None:
            self._out.close()
            self._out = None

    # ------------------------------------------------------------------ out
    def _write(self, line: dict[str, Any] | None) -> None:
        if self._pid != os.getpid():  # a forked child: a file of its own
            self._out = None
            self._seen.clear()
            self._pid = os.getpid()
            self.path = self.path.with_name(f"process-{self._pid}.jsonl")
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115  (kept open for the run)
            self._out.write(json.dumps({"header": self._header()}) + "\n")
        if line is not None:
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
            self._hashes[path] = file_hash(path)
        return self._hashes[path]

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


def _quoted(frame: Frame) -> Frame:
    """The frame with its source line's text, read from the file when the record quoted none (a
    compile failure's frame, the calls metrics name): what finds the line again after an edit
    (`runs.current_line`)."""
    if frame.text or frame.path.startswith("<"):
        return frame
    return replace(frame, text=linecache.getline(frame.path, frame.line).strip())


def _site(event: Event) -> tuple[str, str, int]:
    """What a text-log message is matched on: a break's innermost frame, a compile's recompile."""
    frame = event.frames[-1] if event.frames and event.kind == trace.GRAPH_BREAK else None
    return (event.kind, frame.path, frame.line) if frame else (event.kind, "", 0)


def _placed(event: Event, code: tuple[Frame, ...]) -> Event:
    """A recompile with no user stack: at the line its guard's comment names (torch 2.9), else at
    the compiled function's `def` (a shape guard belongs to the whole function)."""
    if event.frames:
        return trace.placed_in(event, code)
    return replace(event, frames=tuple(_at_def(frame) for frame in code), stack="incomplete")


def _at_def(frame: Frame) -> Frame:
    """A compiled function's first line (`co_firstlineno`, its first decorator's) moved to its
    `def`, with that line's text: where a guard of the whole function is shown."""
    try:
        lines = Path(frame.path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return frame
    if not 0 < frame.line <= len(lines) or not lines[frame.line - 1].lstrip().startswith(("@", "def ", "async ")):
        return frame
    for number in range(frame.line - 1, min(len(lines), frame.line + 20)):  # past multi-line decorators
        text = lines[number].strip()
        if text.startswith(("def ", "async def ")):
            return replace(frame, line=number + 1, text=text)
    return frame


def _absolute(path: str, cwd: str) -> str:
    """A traceback's path as a file on disk: relative ones against the process's folder; names such
    as `<frozen runpy>` stay as they are."""
    if path.startswith("<") or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(cwd, path))
