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
from collections import Counter
from dataclasses import replace
from pathlib import Path

from . import notebooks
from .diagnostics import Diagnostic, FindingData, Fix, LibraryCall, RelatedLocation, RunSeen
from .library_advice import entered, escape_hatch, in_callers_names, library_switch
from .record.guards import kind_of, resumed_function
from .record.log import cell_key
from .record.newest import Sighting, found_in
from .record.runs import FileRun, Placement, RecordedFrame, library_frame
from .record.trace import COMPILE_FAILURE, CUDAGRAPH_SKIP, GRAPH_BREAK, RECOMPILE
from .regions.records import ExternalEntry, Origin
from .rules import RECORDED_RULES, RULES_BY_CODE, ProgramRule, RecordedRule
from .settings import Settings
from .source import Position, Range, SourceText

PREDICTED_RECOMPILES = "GM6"  # the recompile rules' codes, confirmed by the run's recompiles
COMPILED_BY_THE_RUN = "compiled in the recorded run (Dynamo traced it there)"


class RunInFile:
    """The run's events found in one file's text (the checker's one use of a run): the functions
    they show compiled, before the analysis, and the findings they confirm or add, after it."""

    def __init__(self, run: FileRun, path: Path, text: str, tree: ast.Module) -> None:
        self.run = run
        self.tree = tree
        self.found = sightings(run, path, text)
        self.entries = run_entries(path, tree, self.found)

    def merged(self, diagnostics: list[Diagnostic], source: SourceText, settings: Settings) -> list[Diagnostic]:
        return merged(diagnostics, self.found, source, self.tree, self.run, settings)


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
    diagnostics: list[Diagnostic],
    found: list[Sighting],
    source: SourceText,
    tree: ast.Module,
    run: FileRun,
    settings: Settings,
) -> list[Diagnostic]:
    """A file's static `diagnostics` with the run's sightings in it (`found`, in `source` as it reads
    now, parsed as `tree`): a static finding confirmed by the events of its own kind at its line (a break for a break,
    a CUDA-graph skip for a CUDA-graph blocker: one kind counted), with the library lines they met;
    every other event reported by a GM5xx rule (a recompile at a line with a static finding too)."""
    if not found and not run.compiled:
        return diagnostics
    by_line: dict[tuple[int, str], list[Sighting]] = {}
    for sighting in found:
        by_line.setdefault((sighting.line, sighting.placement.event.kind), []).append(sighting)
    used: set[tuple[int, str]] = set()
    predicted: set[int] = set()  # the recompiles (sightings) a GM6xx finding at their line predicted
    confirmed = []
    for diagnostic in diagnostics:
        if diagnostic.code.startswith(PREDICTED_RECOMPILES) and diagnostic.data.cell is None:
            met = _predicted(diagnostic, by_line)
            predicted |= {id(s) for s in met}
            confirmed.append(_met(diagnostic, met, run) if met else _not_met(diagnostic, tree, run))
            continue
        key = _confirming(diagnostic, by_line)
        if key is None:
            confirmed.append(diagnostic)
            continue
        used.add(key)
        if key[1] == GRAPH_BREAK:  # a frame Dynamo skipped logs a failure too: the break says it
            used.add((key[0], COMPILE_FAILURE))
        placements = [s.placement for s in by_line[key]]
        related = tuple(r for r in _library_lines(placements) if r not in diagnostic.related)
        data = replace(diagnostic.data, run=_seen(run, placements))
        confirmed.append(replace(diagnostic, data=data, related=diagnostic.related + related))
    alone = [s for key, sightings in by_line.items() if key not in used for s in sightings if id(s) not in predicted]
    return sorted((*confirmed, *_run_only(alone, source, tree, run, settings)), key=_order)


def _confirming(diagnostic: Diagnostic, by_line: dict[tuple[int, str], list[Sighting]]) -> tuple[int, str] | None:
    """The events at a static finding's line that confirm it: a CUDA-graph blocker's skips; a
    break's breaks, else the compile failures a break caused (`fullgraph=True`). A predicted
    recompile's are `_predicted`; a recompile no rule predicted is GM502's."""
    if diagnostic.data.cell is not None:
        return None
    line = diagnostic.range.start.line + 1
    kinds = (CUDAGRAPH_SKIP,) if diagnostic.code.startswith("GM4") else (GRAPH_BREAK, COMPILE_FAILURE)
    return next(((line, kind) for kind in kinds if (line, kind) in by_line), None)


def _predicted(diagnostic: Diagnostic, by_line: dict[tuple[int, str], list[Sighting]]) -> list[Sighting]:
    """The recompiles at a GM6xx finding's line whose failed guard is of a kind its rule predicts
    (a shape guard confirms GM605; a size kept at 0 or 1 at the same line stays GM502's)."""
    rule = RULES_BY_CODE.get(diagnostic.code)
    kinds = rule.confirmed_by if rule is not None and issubclass(rule, ProgramRule) else frozenset()
    sightings = by_line.get((diagnostic.range.start.line + 1, RECOMPILE), [])
    return [s for s in sightings if kind_of(s.placement.event.guard or s.placement.event.reason) in kinds]


def _met(diagnostic: Diagnostic, met: list[Sighting], run: FileRun) -> Diagnostic:
    """A predicted recompile the run met: its count, and the library lines it was met at."""
    placements = [s.placement for s in met]
    related = tuple(r for r in _library_lines(placements) if r not in diagnostic.related)
    data = replace(diagnostic.data, run=_seen(run, placements))
    return replace(diagnostic, data=data, related=diagnostic.related + related)


def _not_met(diagnostic: Diagnostic, tree: ast.Module, run: FileRun) -> Diagnostic:
    """A predicted recompile (GM6xx) the run did not meet, though it compiled the code it is in:
    marked with a count of 0; in code the run did not compile, as it is."""
    if diagnostic.data.entry is None or not run.compiled:
        return diagnostic
    if not _first_lines(tree, diagnostic.data.entry) & set(run.compiled):
        return diagnostic
    return replace(diagnostic, data=replace(diagnostic.data, run=RunSeen(0, run.name, run.recorded_at, RECOMPILE)))


def _first_lines(tree: ast.Module, qualname: str) -> set[int]:
    """The lines a function's code object may start at (its `def`, or its first decorator), found by
    its qualified name (`Net.forward`); empty when no such function is in the file."""
    body: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next(
            (
                s
                for s in body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == part
            ),
            None,
        )
        if found is None:
            return set()
        body = found.body
    if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    return {found.lineno, *(d.lineno for d in found.decorator_list)}


def _seen(run: FileRun, placements: list[Placement]) -> RunSeen:
    return RunSeen(sum(p.event.count for p in placements), run.name, run.recorded_at, placements[0].event.kind)


def _order(diagnostic: Diagnostic) -> tuple[Position, str]:
    return diagnostic.range.start, diagnostic.code


def _run_only(
    found: list[Sighting], source: SourceText, tree: ast.Module, run: FileRun, settings: Settings
) -> list[Diagnostic]:
    """One GM5xx finding per line and message (counts summed; a line's breaks inside one library
    call are one finding, whatever Dynamo's words), unless turned off or suppressed there."""
    grouped: dict[tuple[int, type[RecordedRule], str], list[Placement]] = {}
    for sighting in found:
        placement = sighting.placement
        rule = RECORDED_RULES.get(placement.event.kind)
        if rule is None or not settings.is_enabled(rule.code) or source.is_suppressed(sighting.line - 1, rule.code):
            continue
        if placement.event.kind == RECOMPILE and placement.beyond and placement.event.guard:
            guard = in_callers_names(placement.event.guard, placement.beyond, str(placement.frame.get("text", "")))
            placement = replace(placement, event=replace(placement.event, guard=guard))
        first = entered(placement.beyond) if placement.event.kind == GRAPH_BREAK else None
        message = f"inside {first['func']}" if first is not None else rule.message_for_event(placement.event)
        grouped.setdefault((sighting.line, rule, message), []).append(placement)
    breaks = {line for line, rule, _ in grouped if rule.event_kind == GRAPH_BREAK}
    return [
        _finding(rule, message, placements, source, tree, line - 1, run)
        for (line, rule, message), placements in grouped.items()
        if not (rule.event_kind == COMPILE_FAILURE and line in breaks)  # a frame Dynamo skipped: the break says it
    ]


def _library_lines(placements: list[Placement]) -> tuple[RelatedLocation, ...]:
    """Every library line the placements met their event at, each once with its count (most met first)."""
    counts: Counter[tuple[str, int]] = Counter()
    first: dict[tuple[str, int], tuple[str, str]] = {}  # the line → the function and the kind met there first
    for placement in placements:
        where = library_frame(placement.beyond)
        if where is not None:
            key = (where["path"], max(int(where["line"]) - 1, 0))
            counts[key] += placement.event.count
            first.setdefault(key, (where.get("func", ""), placement.event.kind))
    related = []
    for (path, line), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        func, kind = first[path, line]
        words = "broke the graph" if kind == GRAPH_BREAK else f"met this {kind.replace('_', ' ')}"
        times = f" ({count} times)" if count > 1 else ""
        related.append(
            RelatedLocation(
                Range(Position(line, 0), Position(line, 0)),
                f"Dynamo {words} here, in `{func}`{times}",
                path,
                "recorded",
            )
        )
    return tuple(related)


def _finding(
    rule: type[RecordedRule],
    message: str,
    placements: list[Placement],
    source: SourceText,
    tree: ast.Module,
    line: int,
    run: FileRun,
) -> Diagnostic:
    """The run's finding at `line` (0-based) for the same event met there (maybe in several
    processes, through several callers, at several library lines: each in `related`); a break in
    a library says what the user can do at their call (`_at_the_call`)."""
    event = placements[0].event
    library = None
    related = _library_lines(placements)
    beyond = next((p.beyond for p in placements if library_frame(p.beyond) is not None), ())
    where = library_frame(beyond)
    action, fix = rule.action_for_event(event), None
    if where is not None:
        callee = beyond[0]["func"]
        via = tuple(f["func"] for f in beyond[1 : beyond.index(where) + 1])
        library = LibraryCall(where["path"], max(int(where["line"]) - 1, 0), callee, via)
        if event.kind == GRAPH_BREAK:
            named = ", ".join(dict.fromkeys(p.event.gb_type or p.event.reason.partition(":")[0] for p in placements))
            message, action, fix = _at_the_call(named, beyond, where, source, tree, line, len(related))
    data = FindingData(
        rule=rule.name,
        library=library,
        run=_seen(run, placements),
        dynamo=event.reason or None,
        action=action,
    )
    return Diagnostic(
        code=rule.code,
        message=message,
        severity=rule.severity_for([p.event for p in placements]),
        range=_line_range(source, line),
        reason_id=event.gb_id.lower() if event.gb_id else None,  # as the static rules name the page
        related=related,
        data=data,
        fix=fix,
    )


def _at_the_call(
    named: str,
    beyond: tuple[RecordedFrame, ...],
    where: RecordedFrame,
    source: SourceText,
    tree: ast.Module,
    line: int,
    lines: int,
) -> tuple[str, str, Fix | None]:
    """What a user can do at their call about a break in a library: the library's own switch
    (`library_advice.library_switch`), else `torch.compiler.disable` on the callee as an unsafe
    fix; the message (with Dynamo's `named` reasons), the action and the fix."""
    first = entered(beyond)
    callee = resumed_function(first["func"] if first is not None else beyond[0]["func"])
    switch = library_switch(beyond, where)
    if switch is not None:
        words = switch.words()
        action = f"{words[:1].upper()}{words[1:]}: the library then skips the line it broke the graph at"
        return f"{action} ({named}); record again to see", action, None
    fix = escape_hatch(source, tree, line, beyond, lines)
    if fix is None:
        action = f"Remove the graph break the recorded run met inside `{callee}`, in the library's code"
        return f"{action} ({named})", action, None
    action = f"Keep `{callee}` out of the graph (`torch.compiler.disable`) or change what it runs"
    return f"{action}: the recorded run broke the graph inside it ({named})", action, fix


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
