"""Where runs are kept and how one is read back: `.graphmend/runs/<run>/` under the project root.

A run is a folder: one JSON Lines file per process that compiled (`process-<pid>.jsonl`, see
`log.py`) and `run.json`, written by `graphmend record` when the command ends (its exit code; a
missing `run.json` means the run was cut short). Reading a run merges its processes: one event per
identity, with the number of times Dynamo met it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .log import content_hash

RUNS = Path(".graphmend") / "runs"
_GITIGNORE = "# graphmend's recorded runs: they quote your source; keep them local\n*\n"


def project_root(start: Path) -> Path:
    """The nearest folder at or above `start` with a pyproject.toml or .git, else `start`."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return start


def new_run(root: Path) -> Path:
    """A fresh run folder under `root`'s runs (which git ignores)."""
    runs = root / RUNS
    runs.mkdir(parents=True, exist_ok=True)
    ignore = root / ".graphmend" / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_GITIGNORE, encoding="utf-8")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    run = runs / f"{stamp}-{os.getpid()}"
    run.mkdir()
    return run


def process_file(run: Path) -> Path:
    """This process's file in `run` (a rank in its name when torchrun set one)."""
    rank = os.environ.get("RANK")
    return run / (f"process-rank{rank}-{os.getpid()}.jsonl" if rank else f"process-{os.getpid()}.jsonl")


class _FrameFields(TypedDict):
    path: str
    line: int
    func: str
    text: str  # the line's text when it was recorded


class RecordedFrame(_FrameFields, total=False):
    """A frame of a recorded event, as the run's files hold it (outermost first)."""

    cell: str  # a frame in a notebook cell: the cell's key (`log.cell_key`)


@dataclass
class RecordedEvent:
    """An event of a run, merged over its processes."""

    id: str
    kind: str
    reason: str
    frames: list[RecordedFrame]
    files: dict[str, str | None]
    count: int = 1
    gb_type: str | None = None
    gb_id: str | None = None
    guard: str | None = None
    stack: str = "complete"
    processes: set[str] = field(default_factory=set)


@dataclass
class Run:
    path: Path
    events: list[RecordedEvent]
    headers: list[dict[str, Any]]
    ended: dict[str, Any] | None  # run.json; None when the run was cut short

    @property
    def torch(self) -> str | None:
        return next((h["torch"] for h in self.headers if h.get("torch")), None)


def read_run(path: Path) -> Run:
    """A run folder's events (first seen first), its processes' headers and its end."""
    events: dict[str, RecordedEvent] = {}
    headers = []
    for file in sorted(path.glob("process-*.jsonl")):
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            if "header" in item:
                headers.append(item["header"])
            elif "again" in item and item["again"] in events:
                events[item["again"]].count += 1
            elif "id" in item and "kind" in item:
                known = events.get(item["id"])
                if known is not None:
                    known.count += 1
                else:
                    events[item["id"]] = RecordedEvent(
                        item["id"],
                        item["kind"],
                        item.get("reason", ""),
                        item.get("frames", []),
                        item.get("files", {}),
                        gb_type=item.get("gb_type"),
                        gb_id=item.get("gb_id"),
                        guard=item.get("guard"),
                        stack=item.get("stack", "complete"),
                    )
                events[item["id"]].processes.add(file.name)
    ended = None
    try:
        ended = json.loads((path / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    return Run(path, _merge_collapsed(list(events.values())), headers, ended)


def _site(frame: RecordedFrame) -> tuple[str, int, str]:
    return frame["path"], frame["line"], frame.get("func", "")


def _collapsed(short: list[RecordedFrame], full: list[RecordedFrame]) -> bool:
    """Whether `short` is `full` less one run of frames whose first is named like the frame after
    it: what torch's `collapse_resume_frames` makes of a `forward` calling another `forward` in the
    first compile of a frame (the caller, the user's line, is dropped; a later compile logs the
    same break with it)."""
    if len(full) <= len(short):
        return False
    shorts, fulls = [_site(f) for f in short], [_site(f) for f in full]
    start = next((n for n, (a, b) in enumerate(zip(shorts, fulls)) if a != b), len(shorts))
    gap = len(fulls) - len(shorts)
    return start < len(shorts) and shorts[start:] == fulls[start + gap :] and fulls[start][2] == shorts[start][2]


def _merge_collapsed(events: list[RecordedEvent]) -> list[RecordedEvent]:
    """Each graph break seen through a collapsed stack counted in the same break with its full stack."""
    breaks = [e for e in events if e.kind == "graph_break"]
    kept = []
    for event in events:
        full = next((o for o in breaks if o.reason == event.reason and _collapsed(event.frames, o.frames)), None)
        if event.kind != "graph_break" or full is None:
            kept.append(event)
        else:
            full.count += event.count
            full.processes |= event.processes
    return kept


def newest_run(root: Path) -> Path | None:
    runs = [p for p in (root / RUNS).glob("*") if p.is_dir()] if (root / RUNS).is_dir() else []
    return max(runs, key=lambda p: p.name) if runs else None


_NOT_PROJECT = ("site-packages", "dist-packages", ".venv", "venv", "__pypackages__")


def is_project_file(path: str, root: Path) -> bool:
    """A file of the user's project: under `root`, not an installed package's, not a virtual
    environment's, not torch's own."""
    if path.startswith("<"):
        return False
    try:
        parts = Path(path).resolve().relative_to(root.resolve()).parts
    except ValueError:
        return False
    return not any(part in _NOT_PROJECT for part in parts) and "torch" not in parts[:1]


def placed(event: RecordedEvent, root: Path) -> tuple[RecordedFrame | None, RecordedFrame | None]:
    """Where a user acts on an event: the innermost frame in a project file or a notebook cell
    (None: none is), and the innermost frame of all when it is elsewhere (a library's or torch's
    line), else None."""
    frames = event.frames
    user = next((f for f in reversed(frames) if "cell" in f or is_project_file(f["path"], root)), None)
    innermost = frames[-1] if frames else None
    return user, innermost if innermost is not None and innermost is not user else None


REANCHOR_LINES = 20  # how far from its recorded line an event's line text is looked for after an edit


def current_line(frame: RecordedFrame, recorded_hash: str | None, text: str) -> int | None:
    """Where a recorded frame's line is in the file as it reads now (`text`): its own line while the
    file is unchanged since the run; after an edit, the one line holding the same text within
    `REANCHOR_LINES` of it; None when there is none, or more than one (the event is stale)."""
    if recorded_hash is not None and content_hash(text.encode("utf-8")) == recorded_hash:
        return int(frame["line"])
    wanted = str(frame.get("text") or "").strip()
    if not wanted:
        return None
    lines = text.splitlines()
    line = int(frame["line"]) - 1
    near = range(max(0, line - REANCHOR_LINES), min(len(lines), line + REANCHOR_LINES + 1))
    found = [number for number in near if lines[number].strip() == wanted]
    return found[0] + 1 if len(found) == 1 else None


@dataclass(frozen=True)
class Placement:
    """An event of a run at a frame of a project file (`placed`), and the frames beyond it (the
    library's or torch's code it met the event in, outermost first)."""

    event: RecordedEvent
    frame: RecordedFrame
    beyond: tuple[RecordedFrame, ...]


@dataclass(frozen=True)
class FileRun:
    """What one file's analysis takes of the newest recorded run: the run (its folder's name, when
    it started) and its events placed in the file; a notebook's, those placed in any notebook cell
    (each cell's code finds its own)."""

    name: str
    started: float
    placements: tuple[Placement, ...]

    def key(self) -> str:
        """What a cache of the file's findings must tell apart: the run, and each event where it was met."""
        return repr(
            (
                self.name,
                self.started,
                [
                    (p.event.id, p.event.count, p.frame.get("line"), p.frame.get("text"), p.frame.get("cell"))
                    for p in self.placements
                ],
            )
        )
