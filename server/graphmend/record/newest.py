"""The newest recorded run of a project, as the analyses and the editor read it: its events
grouped by the file (or notebook cell) they are placed in, read again only when its files change,
and found at their lines in a file as it reads now (`found_in`: an edited file keeps the events
whose line text is found again nearby; the others are stale)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .. import untrusted
from .log import MAX_SOURCE
from .runs import FileRun, Placement, Run, complete_runs, current_line, placed, project_root, read_run


@dataclass(frozen=True)
class Sighting:
    """A placement at its line in the file as it reads now (1-based)."""

    line: int
    placement: Placement


@dataclass
class RecordedRun:
    """What a project's newest run shows: the newest run that says anything (`Run.usable`) and the
    runs recorded while it ran (two at once are one observation), with their events grouped by the
    real path of the file they are placed in."""

    runs: list[Run]
    root: Path
    by_file: dict[str, list[Placement]] = field(default_factory=dict)

    @cached_property
    def compiled_by_file(self) -> dict[str, tuple[int, ...]]:
        """Real path → the first lines of the code its runs compiled there."""
        found: dict[str, set[int]] = {}
        for run in self.runs:
            for where, line in run.compiled:
                found.setdefault(os.path.realpath(where), set()).add(line)
        return {path: tuple(sorted(lines)) for path, lines in found.items()}

    @property
    def run(self) -> Run:
        """The newest of them: what the run is named by."""
        return self.runs[0]

    @property
    def recorded_at(self) -> float:
        """When the last of them ended: a run's age counts from there."""
        return max(run.interval[1] for run in self.runs)

    def for_file(self, path: Path) -> FileRun | None:
        """The run's events in the file at `path` (a notebook: in any notebook cell); None when none is."""
        compiled: tuple[int, ...] = ()
        if path.suffix == ".ipynb":
            found = [p for key, placements in self.by_file.items() if key.startswith(CELL) for p in placements]
        else:
            real = os.path.realpath(path)
            found = self.by_file.get(real, [])
            compiled = self.compiled_by_file.get(real, ())
        return FileRun(self.run.path.name, self.recorded_at, tuple(found), compiled) if found or compiled else None


CELL = "cell:"  # `RecordedRun.by_file`'s key of a notebook cell's events: the prefix, then the cell's key
LOOK_BACK = 16  # how many complete runs are read to find the newest that says anything, and those beside it


def _placements(runs: list[Run], root: Path) -> dict[str, list[Placement]]:
    by_file: dict[str, list[Placement]] = {}
    for event in (event for run in runs for event in run.events):
        user, _ = placed(event, root)
        if user is None:
            continue
        beyond = tuple(event.frames[event.frames.index(user) + 1 :])
        key = CELL + user["cell"] if "cell" in user else os.path.realpath(user["path"])
        by_file.setdefault(key, []).append(Placement(event, user, beyond))
    return by_file


_RUNS: dict[str, tuple[int, Run]] = {}  # run folder → (its run.json's mtime, the run read)
_NEWEST: dict[str, tuple[object, RecordedRun | None]] = {}  # project root → (the runs' stamps, what they show)


def _read(folder: Path, stamp: int) -> Run:
    kept = _RUNS.get(str(folder))
    if kept is None or kept[0] != stamp:
        kept = _RUNS[str(folder)] = (stamp, read_run(folder))
    return kept[1]


def newest(start: Path) -> RecordedRun | None:
    """The newest run of the project at `start` that says anything, with the runs recorded while it
    ran (read again only when a run is added or ends). A run cut short (no run.json) is not shown."""
    root = project_root(start if start.is_dir() else start.parent)
    complete = complete_runs(root, LOOK_BACK)
    kept = _NEWEST.get(str(root))
    if kept is not None and kept[0] == complete:
        return kept[1]
    runs: list[Run] = []
    for folder, stamp in complete:
        run = _read(folder, stamp)
        if not run.usable:
            continue
        if runs and not _overlap(run.interval, runs[0].interval):
            continue
        runs.append(run)
    recorded = RecordedRun(runs, root, _placements(runs, root)) if runs else None
    _NEWEST[str(root)] = (complete, recorded)
    return recorded


def _overlap(one: tuple[float, float], other: tuple[float, float]) -> bool:
    return one[0] <= other[1] and other[0] <= one[1]


@dataclass(frozen=True)
class RunStatus:
    """What an editor shows of the newest run: which it is, when it ended, how many of its events
    are at the project's lines, and how many of those their line is gone from (edited since)."""

    folder: Path
    recorded_at: float  # when the run ended (seconds since the epoch), as the hover's "the run of ..."
    events: int
    stale: int
    torch: str | None
    runs: int = 1  # runs shown together (recorded at the same time)


def run_status(start: Path, texts: Mapping[str, str] | None = None) -> RunStatus | None:
    """The status of the newest run of the project at `start`, each event's line looked for where
    it is now: in `texts` (real path → the editor's text, unsaved edits included) or else on disk;
    a file gone makes its events stale. None without a run."""
    recorded = newest(start)
    if recorded is None:
        return None
    events = stale = 0
    for path, placements in recorded.by_file.items():
        text = texts[path] if texts is not None and path in texts else read_text(path, recorded.root)
        gone = len(placements) if text is None else found_in(placements, text)[1]
        events += len(placements)
        stale += gone
    return RunStatus(recorded.run.path, recorded.recorded_at, events, stale, recorded.run.torch, len(recorded.runs))


def read_text(path: str, root: Path) -> str | None:
    """A file's text as the run's lines are looked for in it (None: unreadable). The path comes
    from a run's file, which a repository can ship: only a regular file in the project is read,
    without blocking and at most `MAX_SOURCE` bytes (a FIFO there would stop the server)."""
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    if not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    try:
        return untrusted.read_bytes(Path(real), MAX_SOURCE).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def newest_file_run(path: Path) -> FileRun | None:
    """What the newest run of the project at `path` met in the file there (None: no run, or none)."""
    recorded = newest(path)
    return recorded.for_file(path) if recorded is not None else None


def found_in(placements: Iterable[Placement], text: str) -> tuple[list[Sighting], int]:
    """The placements whose line is found in `text`, at it, and how many are stale (not found)."""
    found, stale = [], 0
    for placement in placements:
        line = current_line(placement.frame, placement.event.files.get(placement.frame["path"]), text)
        if line is None:
            stale += 1
        else:
            found.append(Sighting(line, placement))
    return found, stale
