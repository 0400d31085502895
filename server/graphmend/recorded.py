"""The newest recorded run in the analysis (`graphmend record`, issues 41 and 51).

A run enters a file's analysis through its context (`ProjectContext.run`, given by
`pipelines.with_newest_run`: the one place, for check, fix, the standard input and the editor
alike), and the checker alone calls this module. Each event is placed at the project line a user
acts on (`record.runs.placed`), where that line is in the file now (`sightings`: an edited file
keeps the events whose line text is found again nearby; the others are stale). The functions
around the lines where the run broke the graph are taken as compiled (`run_entries`: Dynamo traced
them), so their findings appear like any other. A static finding on a line the run met is
confirmed (`data.run`); a line with none gets a finding of the run's own, a GM5xx rule's
(`RECORDED_RULES`), with Dynamo's words and the library or torch line it met the event at.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from pathlib import Path

from . import notebooks
from .diagnostics import Diagnostic, FindingData, LibraryCall, RelatedLocation, RunSeen
from .record.log import cell_key
from .record.newest import Sighting, found_in
from .record.runs import FileRun, Placement
from .record.trace import COMPILE_FAILURE, GRAPH_BREAK
from .regions.records import ExternalEntry, Origin
from .rules import RECORDED_RULES, RecordedRule
from .settings import Settings
from .source import Position, Range, SourceText

COMPILED_BY_THE_RUN = "compiled in the recorded run (Dynamo traced it there)"


class RunInFile:
    """The run's events found in one file's text (the checker's one use of a run): the functions
    they show compiled, before the analysis, and the findings they confirm or add, after it."""

    def __init__(self, run: FileRun, path: Path, text: str, tree: ast.Module) -> None:
        self.run = run
        self.found = sightings(run, path, text)
        self.entries = run_entries(path, tree, self.found)

    def merged(self, diagnostics: list[Diagnostic], source: SourceText, settings: Settings) -> list[Diagnostic]:
        return merged(diagnostics, self.found, source, self.run, settings)


def sightings(run: FileRun, path: Path, text: str) -> list[Sighting]:
    """The run's events found at their lines in `text` (a notebook's: its module, whose cells'
    code finds their events, `notebooks.from_cells`)."""
    if path.suffix != ".ipynb":
        return found_in(run.placements, text)[0]
    by_cell: dict[str, list[Placement]] = {}
    for placement in run.placements:
        by_cell.setdefault(placement.frame["cell"], []).append(placement)
    found = []
    for _, start, cell in notebooks.module_cells(text):
        lines = cell.splitlines()
        for placement in by_cell.get(cell_key(cell), ()):
            line = int(placement.frame["line"])
            if 0 < line <= len(lines) and lines[line - 1].strip() == str(placement.frame.get("text", "")).strip():
                found.append(Sighting(start + line, placement))
    return found


def merged(
    diagnostics: list[Diagnostic], found: list[Sighting], source: SourceText, run: FileRun, settings: Settings
) -> list[Diagnostic]:
    """A file's static `diagnostics` with the run's sightings in it (`found`, in `source` as it reads
    now): the static findings on their lines confirmed, the run's other lines reported by GM5xx rules."""
    if not found:
        return diagnostics
    counts: dict[int, int] = {}
    for sighting in found:
        counts[sighting.line] = counts.get(sighting.line, 0) + sighting.placement.event.count
    statics = [d.range.start.line + 1 if d.data.cell is None else None for d in diagnostics]
    confirmed = [
        replace(d, data=replace(d.data, run=_seen(run, counts[line]))) if line is not None and line in counts else d
        for d, line in zip(diagnostics, statics)
    ]
    reported = set(statics)
    alone = [s for s in found if s.line not in reported]
    return sorted((*confirmed, *_run_only(alone, source, run, settings)), key=_order)


def _seen(run: FileRun, count: int) -> RunSeen:
    return RunSeen(count, run.name, run.started)


def _order(diagnostic: Diagnostic) -> tuple[Position, str]:
    return diagnostic.range.start, diagnostic.code


def _run_only(found: list[Sighting], source: SourceText, run: FileRun, settings: Settings) -> list[Diagnostic]:
    """One GM5xx finding per line and message (counts summed), unless turned off or suppressed there."""
    grouped: dict[tuple[int, type[RecordedRule], str], list[Placement]] = {}
    for sighting in found:
        rule = RECORDED_RULES.get(sighting.placement.event.kind)
        if rule is None or not settings.is_enabled(rule.code) or source.is_suppressed(sighting.line - 1, rule.code):
            continue
        message = rule.message_for_event(sighting.placement.event)
        grouped.setdefault((sighting.line, rule, message), []).append(sighting.placement)
    breaks = {line for line, rule, _ in grouped if rule.event_kind == GRAPH_BREAK}
    return [
        _finding(rule, message, placements, _line_range(source, line - 1), run)
        for (line, rule, message), placements in grouped.items()
        if not (rule.event_kind == COMPILE_FAILURE and line in breaks)  # a frame Dynamo skipped: the break says it
    ]


def _finding(
    rule: type[RecordedRule], message: str, placements: list[Placement], at: Range, run: FileRun
) -> Diagnostic:
    """The run's finding at `at` for the same event met at one line (maybe in several processes or
    through several callers)."""
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
        run=_seen(run, sum(p.event.count for p in placements)),
        dynamo=event.reason or None,
        action=rule.action_for_event(event),
    )
    return Diagnostic(
        code=rule.code,
        message=message,
        severity=rule.severity,
        range=at,
        reason_id=event.gb_id.lower() if event.gb_id else None,  # as the static rules name the page
        related=related,
        data=data,
    )


def _line_range(source: SourceText, line: int) -> Range:
    """The line's code, without its indentation and trailing space."""
    text = source.lines[line].rstrip("\r\n") if line < len(source.lines) else ""
    stripped = text.rstrip()
    return Range(Position(line, len(text) - len(text.lstrip())), Position(line, len(stripped)))


def run_entries(path: Path, tree: ast.Module, found: list[Sighting]) -> tuple[ExternalEntry, ...]:
    """The innermost function around each line where the run broke the graph, as an entry compiled
    by the run (Dynamo traced it there, whatever compiles it)."""
    lines = {s.line for s in found if s.placement.event.kind == GRAPH_BREAK}
    if not lines:
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
    real = os.path.realpath(path)
    entries: dict[str, ExternalEntry] = {}
    for line in sorted(lines):
        around = [s for s in spans if s[0] <= line <= s[1]]
        if not around:
            continue
        start, _, name = max(around, key=lambda s: s[0])
        entries.setdefault(name, ExternalEntry(name, COMPILED_BY_THE_RUN, Origin(real, start - 1, 0, 0)))
    return tuple(entries.values())
