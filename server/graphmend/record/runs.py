"""Where runs are kept and how one is read back: `.graphmend/runs/<run>/` under the project root.

A run is a folder: one JSON Lines file per process that compiled (`process-<pid>.jsonl`, see
`log.py`) and `run.json`, written by `graphmend record` when the command ends (its exit code; a
missing `run.json` means the run was cut short). Reading a run merges its processes: one event per
identity, with the number of times Dynamo met it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .. import untrusted
from .log import content_hash
from .trace import MAX_LINE

RUNS = Path(".graphmend") / "runs"
_GITIGNORE = "# graphmend's recorded runs: they quote your source; keep them local\n*\n"


def library_roots() -> tuple[Path, ...]:
    """The interpreter's own library folders (the standard library, site-packages): with the
    project's, the only places a trace made elsewhere may have its source lines read from."""
    paths = sysconfig.get_paths()
    return tuple(dict.fromkeys(Path(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths))


def project_root(start: Path) -> Path:
    """The nearest folder at or above `start` with a pyproject.toml or .git of the user's own
    (`untrusted.ours`: not one another user planted in a shared folder above), else `start`."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        for marker in (folder / "pyproject.toml", folder / ".git"):
            if marker.exists() and untrusted.ours(marker) and (marker.name == ".git" or marker.is_file()):
                return folder
    return start


KEEP = 20  # the runs (and proofs) kept per project, each a folder of up to a few hundred KB
KEEP_VARIABLE = "GRAPHMEND_KEEP_RUNS"  # the user's own choice of how many (0: all), never a repository's
_STAMPED = re.compile(r"\d{8}-\d{6}-\d+(-\d+)?")  # what `new_run` and the prover name their folders
_STALE_SECONDS = 86_400.0  # a folder unfinished for a day is a run cut short, not one going on


def stamp() -> str:
    """A new run's or proof's folder name (`_STAMPED`): when (UTC) and which process."""
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{os.getpid()}"


def make_room(folder: Path, finished: str) -> list[str]:
    """`prune` before a new folder is made in `folder`: with it, a project keeps
    `GRAPHMEND_KEEP_RUNS` finished runs, and proofs (0: all), else 20; the names deleted."""
    value = os.environ.get(KEEP_VARIABLE, "").strip()
    keep = int(value) if value.isdigit() else KEEP
    return prune(folder, finished, keep - 1) if keep else []


def prune(folder: Path, finished: str, keep: int) -> list[str]:
    """Delete all but the newest `keep` finished folders graphmend named in `folder` (finished:
    `finished` is in it), and unfinished ones a day old; the names deleted. Only folders of the
    user's own, named as graphmend names them, none through a link: nothing else is touched."""
    if not untrusted.real_folder(folder):
        return []
    try:
        entries = sorted(
            (e for e in os.scandir(folder) if _STAMPED.fullmatch(e.name) and e.is_dir(follow_symlinks=False)),
            key=lambda e: e.name,
            reverse=True,
        )
    except OSError:
        return []
    now, newer, removed = time.time(), 0, []
    for entry in entries:
        path = Path(entry.path)
        try:
            modified = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue  # gone meanwhile
        try:
            done = stat.S_ISREG(os.lstat(path / finished).st_mode)
        except OSError:
            done = False
        if (done and newer < keep) or (not done and now - modified < _STALE_SECONDS) or not untrusted.ours(path):
            newer += done
            continue
        shutil.rmtree(path, ignore_errors=True)  # removes links inside, never follows them
        removed.append(entry.name)
    return removed


def new_run(root: Path) -> Path:
    """A fresh run folder under `root`'s runs (which git ignores), made in folders of the user's own
    only (UntrustedFileError where `.graphmend` is a link); the oldest runs beyond those kept go (`make_room`)."""
    runs = untrusted.owned_folders(root, RUNS)
    untrusted.write_new(root / RUNS.parent / ".gitignore", _GITIGNORE)
    make_room(runs, "run.json")
    name = stamp()
    for number in range(1, 1000):  # a second run in the same second (`recording()` twice in a cell)
        run = runs / (name if number == 1 else f"{name}-{number}")
        try:
            run.mkdir()
        except FileExistsError:
            continue
        return run
    raise FileExistsError(f"{runs / name}: a thousand runs this second")


def finish_run(run: Path, command: list[str], started: float, code: int | None, error: str | None = None) -> None:
    """Write the run's run.json, which makes it complete: written aside, then renamed into place, so
    that no reader sees half of it (a run without it is not shown)."""
    ended: dict[str, Any] = {
        "argv": command,
        "cwd": os.getcwd(),
        "started": started,
        "ended": time.time(),
        "exit_code": code,
    }
    if error is not None:
        ended["error"] = error
    aside = run / f".run.json.{os.getpid()}"
    aside.write_text(json.dumps(ended, indent=1) + "\n", encoding="utf-8")
    os.replace(aside, run / "run.json")


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
    carried: str | None = None  # the user's name of the value a guard's `___stack0` is (`guards.carried_name`)
    stack: str = "complete"
    processes: set[str] = field(default_factory=set)


@dataclass
class Run:
    path: Path
    events: list[RecordedEvent]
    headers: list[dict[str, Any]]
    ended: dict[str, Any] | None  # run.json; None when the run was cut short
    compiles: int = 0  # compiles its processes counted (each process's last line says)
    skipped: int = 0  # lines of its files that are not a valid event (cut by a crash, or made elsewhere)
    compiled: frozenset[tuple[str, int]] = frozenset()  # the code they compiled: (path, first line)

    @property
    def torch(self) -> str | None:
        return next((h["torch"] for h in self.headers if isinstance(h.get("torch"), str)), None)

    @property
    def interval(self) -> tuple[float, float]:
        """When the run started and ended (seconds since the epoch; run.json's, else its processes')."""
        ended = self.ended or {}
        starts = [h["started"] for h in self.headers if _number(h.get("started"))]
        started = ended["started"] if _number(ended.get("started")) else min(starts, default=0.0)
        return started, ended["ended"] if _number(ended.get("ended")) else max(starts, default=started)

    @property
    def usable(self) -> bool:
        """Whether the run says anything about the program's compiles: a process of it imported
        torch, and it compiled or met something, or ended well. A command that failed before it
        compiled (no torch, a wrong path, an error at import) says nothing, and hides no other run."""
        if self.torch is None:
            return False
        return bool(self.events) or self.compiles > 0 or (self.ended or {}).get("exit_code") == 0


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e11


KINDS = ("graph_break", "recompile", "compile_failure", "cudagraph_skip")
MAX_RECORD_LINE = 1 << 20  # a longer line of a run's file is skipped: no event is that large
MAX_RUN_FILE = 256 << 20  # no more of one process's file is read
MAX_EVENTS = 5_000  # distinct events read from a run (a real one has hundreds); more are counted as skipped
_MERGE_CANDIDATES = 64  # full stacks a collapsed one is compared with, per reason and innermost frame


def _text(value: object, limit: int = 4096) -> str | None:
    return value[:limit] if isinstance(value, str) and "\0" not in value else None


def valid_frame(raw: object) -> RecordedFrame | None:
    """A frame of a run's file as the reader keeps it, or None when a value is not what the
    recorder writes (a path with a NUL, a line that is no line number)."""
    if not isinstance(raw, dict):
        return None
    path, line, func, text = (
        _text(raw.get("path")),
        raw.get("line"),
        _text(raw.get("func", "")),
        _text(raw.get("text", "")),
    )
    if not path or isinstance(line, bool) or not isinstance(line, int) or not 0 < line <= MAX_LINE:
        return None
    frame = RecordedFrame(path=path, line=line, func=func or "", text=text or "")
    cell = _text(raw.get("cell"))
    if cell is not None:
        frame["cell"] = cell
    return frame


def _event(item: dict[str, Any]) -> RecordedEvent | None:
    """An event line of a run's file, validated (None: a value is not what the recorder writes)."""
    identity, kind, frames = _text(item.get("id"), 64), item.get("kind"), item.get("frames", [])
    if not identity or kind not in KINDS or not isinstance(frames, list):
        return None
    valid = [valid_frame(f) for f in frames[:256]]
    if any(f is None for f in valid):
        return None
    files = item.get("files")
    files = files if isinstance(files, dict) else {}
    return RecordedEvent(
        identity,
        kind,
        _text(item.get("reason", ""), 65536) or "",
        [f for f in valid if f is not None],
        {k: v for k, v in files.items() if isinstance(k, str) and (v is None or isinstance(v, str))},
        gb_type=_text(item.get("gb_type")),
        gb_id=_text(item.get("gb_id"), 16),
        guard=_text(item.get("guard")),
        carried=_text(item.get("carried"), 256),
        stack="incomplete" if item.get("stack") == "incomplete" else "complete",
    )


def _lines(file: Path) -> Iterator[str]:
    """A run's file line by line (streamed, `untrusted.lines`), a line too long to be an event's as
    an empty one (no event: counted as skipped); nothing from a file that is not a regular file (a
    FIFO, a device) or is a link."""
    for raw in untrusted.lines(file, MAX_RECORD_LINE, MAX_RUN_FILE):
        yield raw.decode("utf-8", "replace")


def read_run(path: Path) -> Run:
    """A run folder's events (first seen first), its processes' headers and its end; each line of
    its files validated (a bad one is counted in `skipped`, never raised)."""
    events: dict[str, RecordedEvent] = {}
    headers = []
    compiles = skipped = 0
    compiled: set[tuple[str, int]] = set()
    for file in sorted(path.glob("process-*.jsonl")):
        for line in _lines(file):
            try:
                item = untrusted.loads(line)
            except ValueError:  # deeply nested or non-finite JSON too (issue 68)
                item = None
            if not isinstance(item, dict):
                skipped += 1
            elif isinstance(item.get("header"), dict):
                headers.append(item["header"])
            elif isinstance(item.get("closed"), dict):
                count = item["closed"].get("compiles")
                compiles += count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
                compiled |= _compiled_code(item["closed"].get("compiled"))
            elif isinstance(item.get("again"), str) and item["again"] in events:
                events[item["again"]].count += 1
                events[item["again"]].processes.add(file.name)
            elif (event := _event(item)) is None or (event.id not in events and len(events) >= MAX_EVENTS):
                skipped += 1
            else:
                known = events.setdefault(event.id, event)
                if known is not event:
                    known.count += 1
                known.processes.add(file.name)
    ended = None
    try:
        raw = untrusted.load_json(path / "run.json")
        ended = raw if isinstance(raw, dict) else None
    except OSError:
        pass
    return Run(path, _merge_collapsed(list(events.values())), headers, ended, compiles, skipped, frozenset(compiled))


def _merge_key(event: RecordedEvent) -> tuple[str, tuple[str, int, str] | None]:
    """What a collapsed stack shares with its full one: the reason and the innermost frame."""
    return event.reason, _site(event.frames[-1]) if event.frames else None


def _compiled_code(raw: object) -> set[tuple[str, int]]:
    """A process's list of compiled code ("path:first line"), validated: anything else is dropped."""
    found = set()
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, str):
            where, _, line = item.rpartition(":")
            if where and line.isdigit():
                found.add((where, int(line)))
    return found


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
    """Each graph break seen through a collapsed stack counted in the same break with its full stack
    (one with the same reason and innermost frame: each break is compared with those only, not with
    every other, which a run of many events made quadratic: issue 68)."""
    breaks: dict[tuple[str, tuple[str, int, str] | None], list[RecordedEvent]] = {}
    for event in events:
        same = breaks.setdefault(_merge_key(event), []) if event.kind == "graph_break" else None
        if same is not None and len(same) < _MERGE_CANDIDATES:
            same.append(event)
    kept = []
    for event in events:
        candidates = breaks.get(_merge_key(event), []) if event.kind == "graph_break" else []
        full = next((o for o in candidates if _collapsed(event.frames, o.frames)), None)
        if event.kind != "graph_break" or full is None:
            kept.append(event)
        else:
            full.count += event.count
            full.processes |= event.processes
    return kept


def complete_runs(root: Path, limit: int) -> list[tuple[Path, int]]:
    """The newest `limit` complete runs under `root` (their run.json is written last, when the
    command ended), newest first, each with its run.json's modification time (ns). No link is
    followed: a repository's `.graphmend/runs` linking to a folder elsewhere is no run of the user's."""
    if not (untrusted.real_folder(root / RUNS.parent) and untrusted.real_folder(root / RUNS)):
        return []
    try:
        names = sorted(
            (e.name for e in os.scandir(root / RUNS) if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")),
            reverse=True,
        )
    except OSError:
        return []
    found = []
    for name in names:
        try:
            info = (root / RUNS / name / "run.json").lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((root / RUNS / name, info.st_mtime_ns))
        if len(found) == limit:
            break
    return found


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
    (None: none is), and the line it was met at elsewhere (a library's or torch's, `library_frame`
    of the frames past the user's), else None."""
    frames = event.frames
    user = next((f for f in reversed(frames) if "cell" in f or is_project_file(f["path"], root)), None)
    beyond = tuple(frames[frames.index(user) + 1 :]) if user is not None else tuple(frames)
    return user, library_frame(beyond)


def library_frame(beyond: tuple[RecordedFrame, ...]) -> RecordedFrame | None:
    """The line an event was met at past the user's: the innermost frame that is not Dynamo's own
    machinery (`torch/_dynamo/polyfills/...` stands for the builtin the library called, so the
    library's line before it is the one to read); None when there is none."""
    if not beyond:
        return None
    return next((f for f in reversed(beyond) if not _is_torch_private(f["path"])), beyond[-1])


def _is_torch_private(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return any(a == "torch" and b.startswith("_") for a, b in zip(parts, parts[1:]))


REANCHOR_LINES = 60  # how far from its recorded line an event's line text is looked for after an edit (graphmend's own helpers, added above, take 22 lines each)


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
    it ended) and its events placed in the file; a notebook's, those placed in any notebook cell
    (each cell's code finds its own)."""

    name: str
    recorded_at: float
    placements: tuple[Placement, ...]
    compiled: tuple[int, ...] = ()  # first lines of the file's code the run compiled (a def, or its decorator)

    def key(self) -> str:
        """What a cache of the file's findings must tell apart: the run, and each event where it was met."""
        return repr(
            (
                self.name,
                self.recorded_at,
                [
                    (p.event.id, p.event.count, p.frame.get("line"), p.frame.get("text"), p.frame.get("cell"))
                    for p in self.placements
                ],
                self.compiled,
            )
        )
