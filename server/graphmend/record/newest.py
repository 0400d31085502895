"""The newest recorded run of a project, as the analyses and the editor read it: its events
grouped by the file (or notebook cell) they are placed in, read again only when its files change,
and found at their lines in a file as it reads now (`found_in`: an edited file keeps the events
whose line text is found again nearby; the others are stale)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .runs import FileRun, Placement, Run, current_line, newest_run, placed, project_root, read_run


@dataclass(frozen=True)
class Sighting:
    """A placement at its line in the file as it reads now (1-based)."""

    line: int
    placement: Placement


@dataclass
class RecordedRun:
    """A project's newest run, with its events grouped by the real path of the file they are placed in."""

    run: Run
    root: Path
    by_file: dict[str, list[Placement]] = field(default_factory=dict)

    @property
    def started(self) -> float:
        return min((h.get("started") or 0.0 for h in self.run.headers), default=0.0)

    def for_file(self, path: Path) -> FileRun | None:
        """The run's events in the file at `path` (a notebook: in any notebook cell); None when none is."""
        if path.suffix == ".ipynb":
            found = [p for key, placements in self.by_file.items() if key.startswith(CELL) for p in placements]
        else:
            found = self.by_file.get(os.path.realpath(path), [])
        return FileRun(self.run.path.name, self.started, tuple(found)) if found else None


CELL = "cell:"  # `RecordedRun.by_file`'s key of a notebook cell's events: the prefix, then the cell's key


def _placements(run: Run, root: Path) -> dict[str, list[Placement]]:
    by_file: dict[str, list[Placement]] = {}
    for event in run.events:
        user, _ = placed(event, root)
        if user is None:
            continue
        beyond = tuple(event.frames[event.frames.index(user) + 1 :])
        key = CELL + user["cell"] if "cell" in user else os.path.realpath(user["path"])
        by_file.setdefault(key, []).append(Placement(event, user, beyond))
    return by_file


_RUNS: dict[str, tuple[float, RecordedRun]] = {}  # run folder → (its newest file's mtime, the run read)


def newest(start: Path) -> RecordedRun | None:
    """The newest run of the project at `start` (read again only when one of its files changed)."""
    root = project_root(start if start.is_dir() else start.parent)
    folder = newest_run(root)
    if folder is None:
        return None
    try:
        stamp = max(p.stat().st_mtime for p in folder.iterdir())
    except (OSError, ValueError):
        return None
    kept = _RUNS.get(str(folder))
    if kept is None or kept[0] != stamp:
        run = read_run(folder)
        kept = _RUNS[str(folder)] = (stamp, RecordedRun(run, root, _placements(run, root)))
    return kept[1]


@dataclass(frozen=True)
class RunStatus:
    """What an editor shows of the newest run: which it is, when it started, how many of its events
    are at the project's lines, and how many of those their line is gone from (edited since)."""

    folder: Path
    recorded_at: float  # when the run started (seconds since the epoch), as the hover's "the run of ..."
    events: int
    stale: int
    torch: str | None


def run_status(start: Path, texts: Mapping[str, str] | None = None) -> RunStatus | None:
    """The status of the newest run of the project at `start`, each event's line looked for where
    it is now: in `texts` (real path → the editor's text, unsaved edits included) or else on disk;
    a file gone makes its events stale. None without a run."""
    recorded = newest(start)
    if recorded is None:
        return None
    events = stale = 0
    for path, placements in recorded.by_file.items():
        text = texts[path] if texts is not None and path in texts else read_text(path)
        gone = len(placements) if text is None else found_in(placements, text)[1]
        events += len(placements)
        stale += gone
    return RunStatus(recorded.run.path, recorded.started, events, stale, recorded.run.torch)


def read_text(path: str) -> str | None:
    """A file's text as the run's lines are looked for in it (None: unreadable)."""
    try:
        return Path(path).read_bytes().decode("utf-8")
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
