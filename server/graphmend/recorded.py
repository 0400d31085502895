"""The newest recorded run merged with the static findings (`graphmend record`, issue 41).

Each event of the run is placed at the project line a user acts on (`record.runs.placed`), where
that line is in the file now (`current_line`: an edited file keeps the events whose line text is
found again nearby; the others are stale). A static finding on such a line is confirmed
(`data.run`). A line with none gets a finding of the run's own, a GM5xx rule's (`RECORDED_RULES`),
with Dynamo's words and the library or torch line it met the event at; a graph break gets the fix of
a static rule that can rewrite its line once the run shows that the line's function is compiled.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import notebooks
from .checker import check_text
from .diagnostics import Diagnostic, FindingData, LibraryCall, RelatedLocation, RunSeen
from .record.log import cell_key
from .record.runs import RecordedEvent, Run, current_line, newest_run, placed, project_root, read_run
from .record.trace import COMPILE_FAILURE, GRAPH_BREAK
from .regions import ProjectContext
from .regions.records import ExternalEntry, Origin
from .rules import RECORDED_RULES, RecordedRule
from .settings import Settings
from .source import Position, Range, SourceText

COMPILED_BY_THE_RUN = "compiled in the recorded run (Dynamo traced it there)"


@dataclass(frozen=True)
class Placement:
    """An event of the run at a frame of a project file, and the frames beyond it (the library's
    or torch's code it met the event in, outermost first)."""

    event: RecordedEvent
    frame: dict[str, Any]
    beyond: tuple[dict[str, Any], ...]


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

    def seen(self, count: int) -> RunSeen:
        return RunSeen(count, self.run.path.name, self.started)

    def sightings(self, path: str, text: str) -> tuple[list[Sighting], int]:
        """The events placed in the file at `path` whose line is found in `text`, and how many
        are stale (their line is not found)."""
        found, stale = [], 0
        for placement in self.by_file.get(path, ()):
            line = current_line(placement.frame, placement.event.files.get(placement.frame["path"]), text)
            if line is None:
                stale += 1
            else:
                found.append(Sighting(line, placement))
        return found, stale

    def cell_sightings(self, module: str) -> list[Sighting]:
        """The events placed in a notebook's cells, found by each cell's code (`cell_key`) in the
        notebook's `module` (`notebooks.from_cells`), at their lines there (1-based)."""
        found = []
        for _, start, text in notebooks.module_cells(module):
            lines = text.splitlines()
            for placement in self.by_file.get(CELL + cell_key(text), ()):
                line = int(placement.frame["line"])
                if 0 < line <= len(lines) and lines[line - 1].strip() == str(placement.frame.get("text", "")).strip():
                    found.append(Sighting(start + line, placement))
        return found


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


# The file analysed again with the functions around the given lines (1-based) taken as compiled.
Recheck = Callable[[set[int]], list[Diagnostic]]


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
        gone = len(placements) if text is None else recorded.sightings(path, text)[1]
        events += len(placements)
        stale += gone
    return RunStatus(recorded.run.path, recorded.started, events, stale, recorded.run.torch)


def read_text(path: str) -> str | None:
    """A file's text as the run's lines are looked for in it (None: unreadable)."""
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def merged(
    diagnostics: tuple[Diagnostic, ...],
    sightings: list[Sighting],
    text: str,
    recorded: RecordedRun,
    settings: Settings,
    recheck: Recheck | None,
) -> tuple[Diagnostic, ...]:
    """A file's static `diagnostics` with the run's `sightings` in it (`text` as it reads now):
    the static findings on their lines confirmed, their other lines reported by GM5xx rules.
    `recheck` analyses the file again with more compiled entries (None: run-only breaks get no fix)."""
    if not sightings:
        return diagnostics
    counts: dict[int, int] = {}
    for sighting in sightings:
        counts[sighting.line] = counts.get(sighting.line, 0) + sighting.placement.event.count
    statics = [d.range.start.line + 1 if d.data.cell is None else None for d in diagnostics]
    confirmed = tuple(
        replace(d, data=replace(d.data, run=recorded.seen(counts[line]))) if line is not None and line in counts else d
        for d, line in zip(diagnostics, statics)
    )
    reported = set(statics)
    alone = [s for s in sightings if s.line not in reported]
    return tuple(sorted((*confirmed, *_run_only(alone, text, recorded, settings, recheck)), key=_order))


def _order(diagnostic: Diagnostic) -> tuple[Position, str]:
    return diagnostic.range.start, diagnostic.code


def _run_only(
    sightings: list[Sighting], text: str, recorded: RecordedRun, settings: Settings, recheck: Recheck | None
) -> list[Diagnostic]:
    """One GM5xx finding per line and message (counts summed), unless turned off or suppressed there."""
    source = SourceText(text)
    grouped: dict[tuple[int, type[RecordedRule], str], list[Placement]] = {}
    for sighting in sightings:
        rule = RECORDED_RULES.get(sighting.placement.event.kind)
        if rule is None or not settings.is_enabled(rule.code) or source.is_suppressed(sighting.line - 1, rule.code):
            continue
        message = rule.message_for_event(sighting.placement.event)
        grouped.setdefault((sighting.line, rule, message), []).append(sighting.placement)
    breaks = {line for line, rule, _ in grouped if rule.event_kind == GRAPH_BREAK}
    fixes = _static_fixes(breaks, recheck) if breaks and recheck is not None else {}
    return [
        _finding(rule, message, placements, _line_range(source, line - 1), recorded, fixes.get(line))
        for (line, rule, message), placements in grouped.items()
        if not (rule.event_kind == COMPILE_FAILURE and line in breaks)  # a frame Dynamo skipped: the break says it
    ]


def _finding(
    rule: type[RecordedRule],
    message: str,
    placements: list[Placement],
    at: Range,
    recorded: RecordedRun,
    static: Diagnostic | None,
) -> Diagnostic:
    """The run's finding at `at` for the same event met at one line (maybe in several processes or
    through several callers), with a static rule's finding there whose fix it carries."""
    event = placements[0].event
    beyond = placements[0].beyond
    library = None
    related: tuple[RelatedLocation, ...] = ()
    if beyond:
        where = beyond[-1]
        line = max(int(where["line"]) - 1, 0)
        library = LibraryCall(where["path"], line, beyond[0]["func"], tuple(f["func"] for f in beyond[1:]))
        words = "broke the graph" if event.kind == GRAPH_BREAK else f"met this {rule.name.removeprefix('recorded-')}"
        related = (
            RelatedLocation(
                Range(Position(line, 0), Position(line, 0)),
                f"Dynamo {words} here, in `{where['func']}`",
                where["path"],
                kind="library",
            ),
        )
    data = FindingData(
        rule=rule.name,
        library=library,
        run=recorded.seen(sum(p.event.count for p in placements)),
        dynamo=event.reason or None,
        action=rule.action_for_event(event),
        rewrite=static.code if static is not None else None,
    )
    return Diagnostic(
        code=rule.code,
        message=message,
        severity=rule.severity,
        range=at,
        reason_id=event.gb_id.lower() if event.gb_id else None,  # as the static rules name the page
        related=related,
        fix=static.fix if static is not None else None,
        data=data,
    )


def _line_range(source: SourceText, line: int) -> Range:
    """The line's code, without its indentation and trailing space."""
    text = source.lines[line].rstrip("\r\n") if line < len(source.lines) else ""
    stripped = text.rstrip()
    return Range(Position(line, len(text) - len(text.lstrip())), Position(line, len(stripped)))


def _static_fixes(lines: set[int], recheck: Recheck) -> dict[int, Diagnostic]:
    """Line → the static finding with a fix there once the functions holding `lines` are taken as
    compiled (the run shows Dynamo traced them)."""
    found: dict[int, Diagnostic] = {}
    for diagnostic in recheck(lines):
        line = diagnostic.range.start.line + 1
        if line in lines and diagnostic.fix is not None and line not in found:
            found[line] = diagnostic
    return found


def entries_at(path: str, source: SourceText, lines: set[int]) -> tuple[ExternalEntry, ...]:
    """The innermost function around each line, as an entry compiled by the run."""
    try:
        tree = ast.parse(source.code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")

    visit(tree, "")
    entries: dict[str, ExternalEntry] = {}
    for line in sorted(lines):
        around = [s for s in spans if s[0] <= line <= s[1]]
        if not around:
            continue
        start, _, name = max(around, key=lambda s: s[0])
        entries.setdefault(name, ExternalEntry(name, COMPILED_BY_THE_RUN, Origin(path, start - 1, 0, 0)))
    return tuple(entries.values())


def merged_file(
    diagnostics: tuple[Diagnostic, ...],
    path: Path,
    text: str,
    settings: Settings,
    context: ProjectContext | None,
    recorded: RecordedRun | None = None,
) -> tuple[Diagnostic, ...]:
    """`merged` for one file (its own `settings`) of the project at `path` (a notebook's: `text` is
    its module), with the recheck the pipelines share: the file's text analysed again in its
    project `context`, plus the run's entries. The newest run of the project is read when
    `recorded` is not given."""
    recorded = recorded if recorded is not None else newest(path)
    if recorded is None:
        return diagnostics
    real = os.path.realpath(path)
    notebook = path.suffix == ".ipynb"  # `text` is its module: events are found by their cells' code
    sightings = recorded.cell_sightings(text) if notebook else recorded.sightings(real, text)[0]
    base = context or ProjectContext()

    def recheck(lines: set[int]) -> list[Diagnostic]:
        entries = entries_at(real, SourceText(text), lines)
        if not entries:
            return []
        return check_text(text, path, settings, replace(base, entries=(*base.entries, *entries)))

    return merged(diagnostics, sightings, text, recorded, settings, recheck)
