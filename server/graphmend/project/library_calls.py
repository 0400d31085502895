"""Breaks inside installed libraries, reported where the user's compiled code calls into them.

The project follows calls from compiled code into library modules (`libraries.py`); each library
file is then checked like a project file, with what the project says reaches it. Its findings are
not the user's to edit, so each goes into the context of the user's file that leads there as a
`CalledFinding`, and the checker reports it at that file's call, with the library line and the chain
as related information (and in `data`, for JSON and the editors' hovers). Project files outside the
checked paths are handled the same way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..diagnostics import Diagnostic, FindingData, LibraryCall, RelatedLocation
from ..regions import CalledFinding, CompiledRegions, ExternalRef, ProjectContext
from ..settings import Settings
from ..source import Position, Range, SourceText
from .names import Key
from .reach import Step
from .summary import ModuleSummary


class Project(Protocol):
    """What following calls needs of `joined.Project`, which builds its called findings with it."""

    @property
    def summaries(self) -> dict[str, ModuleSummary]: ...

    def reached(self) -> dict[Key, Step]: ...

    def callers(self) -> dict[Key, set[Key]]: ...

    def targets(self, ref: ExternalRef, importer: ModuleSummary) -> list[Key]: ...

    def dotted(self, key: Key) -> str: ...

    def context_for(self, path: str) -> ProjectContext: ...


# The checker, given to the project by its build: each (path, context) → that file's findings.
CheckHidden = Callable[[list[tuple[str, ProjectContext]]], Mapping[str, Sequence[Diagnostic]]]

_NOWHERE = Range(Position(0, 0), Position(0, 0))  # a finding's range until the checker finds the call


@dataclass(frozen=True)
class _Reached:
    """A finding in a hidden file and how a reported file's compiled code reaches it."""

    caller: Key  # the reported file's function whose call leads into hidden files
    callee: Key  # the first hidden function on the way
    via: tuple[str, ...]  # dotted names of the hidden functions after `callee`, up to the finding's entry
    path: str  # the hidden file
    diagnostic: Diagnostic


def follow_calls(
    project: Project, reported: Iterable[str], check: CheckHidden
) -> tuple[dict[str, tuple[CalledFinding, ...]], dict[str, tuple[Diagnostic, ...]]]:
    """Check the files compiled code reaches that are not `reported` (libraries; for the CLI also
    project files outside the checked paths), each in its context. Returns, per reported file, the
    findings its calls lead to, and per hidden file, its own findings that compiled code reaches."""
    hidden = sorted({path for path, _ in project.reached()} - set(reported))
    contexts = {path: project.context_for(path) for path in hidden}
    work = [(path, context) for path, context in contexts.items() if context.entries]
    found: dict[str, Sequence[Diagnostic]] = dict.fromkeys(hidden, ())
    found.update(check(work) if work else {})
    own = {path: reached_from_elsewhere(diagnostics, contexts[path]) for path, diagnostics in found.items()}
    return called_findings(project, found, contexts), {path: reached for path, reached in own.items() if reached}


def called_findings(
    project: Project, hidden: Mapping[str, Sequence[Diagnostic]], contexts: Mapping[str, ProjectContext]
) -> dict[str, tuple[CalledFinding, ...]]:
    """Reported file → the findings of `hidden` files that its compiled code's calls lead to. A
    finding counts only when a reported file's compiled code reaches its function (not a compile
    site or `forward` of the hidden file's own)."""
    found: dict[str, dict[tuple[object, ...], CalledFinding]] = {}
    for reached in _reached(project, hidden, contexts):
        summary = project.summaries[reached.caller[0]]
        function = summary.function(reached.caller[1])
        for ref in function.external if function is not None else ():
            if reached.callee not in project.targets(ref, summary):
                continue
            call = replace(ref, tensors=())
            finding = CalledFinding(reached.caller[1], call, _at_call(project, reached))
            key = (call, reached.path, reached.diagnostic.range.start, reached.diagnostic.code)
            found.setdefault(reached.caller[0], {}).setdefault(key, finding)
    return {path: tuple(findings.values()) for path, findings in found.items()}


def _reached(
    project: Project, hidden: Mapping[str, Sequence[Diagnostic]], contexts: Mapping[str, ProjectContext]
) -> Iterator[_Reached]:
    """Each finding of a hidden file with every reported function whose call leads to it, found by
    walking back over all callers through hidden files."""
    callers = project.callers()
    for path, diagnostics in hidden.items():
        for diagnostic in reached_from_elsewhere(diagnostics, contexts[path]):
            start: Key = (path, diagnostic.data.entry or "")
            queue: deque[tuple[Key, tuple[str, ...]]] = deque([(start, ())])
            seen = {start}
            while queue:
                key, via = queue.popleft()
                for caller in sorted(callers.get(key, ())):
                    if caller[0] not in hidden:
                        yield _Reached(caller, key, via, path, diagnostic)
                    elif caller not in seen:
                        seen.add(caller)
                        queue.append((caller, (project.dotted(key), *via)))


def reached_from_elsewhere(diagnostics: Iterable[Diagnostic], context: ProjectContext) -> tuple[Diagnostic, ...]:
    """The findings of a hidden file in functions other files' compiled code enters (not under a
    compile site or `forward` of its own)."""
    entered = {entry.qualname for entry in context.entries}
    return tuple(d for d in diagnostics if d.data.entry in entered)


def _at_call(project: Project, found: _Reached) -> Diagnostic:
    library = found.diagnostic
    message = library.message
    callee = project.dotted(found.callee)
    via = " via " + " → ".join(f"`{name}`" for name in found.via) if found.via else ""
    where = f"{_display(project, found.path)}:{library.range.start.line + 1}"
    return Diagnostic(
        code=library.code,
        message=f"`{callee}` breaks the graph in {where}: {message}",
        severity=library.severity,
        range=_NOWHERE,
        reason_id=library.reason_id,
        related=(
            RelatedLocation(library.range, f"the break, in `{callee}`{via}", found.path, kind="library"),
            *(replace(r, path=r.path or found.path) for r in library.related),  # its chain in the library
        ),
        data=FindingData(
            rule=library.data.rule,
            library=LibraryCall(found.path, library.range.start.line, callee, found.via),
            no_fix="the break is in code outside the checked files",
        ),
    )


def _display(project: Project, path: str) -> str:
    """A hidden file as its package names it: `torchmetrics/functional/classification/accuracy.py`."""
    summary = project.summaries[path]
    if not summary.name:
        return Path(path).name
    tail = "/__init__.py" if Path(path).name == "__init__.py" else ".py"
    return summary.name.replace(".", "/") + tail


def call_site_diagnostics(
    regions: CompiledRegions, source: SourceText, findings: Iterable[CalledFinding], settings: Settings
) -> list[Diagnostic]:
    """Each finding at the calls of its caller that lead there, at the callee's name (one line)."""
    functions = {function.qualname: function for function in regions.index.all_functions}
    placed: dict[tuple[object, ...], Diagnostic] = {}
    for finding in findings:
        function = functions.get(finding.caller)
        if function is None or not settings.is_enabled(finding.diagnostic.code):
            continue
        for call, _, ref in regions.call_targets(function):
            if ref is None or replace(ref, tensors=()) != finding.call:
                continue
            place = source.node_range(call.func)
            if place.end.line != place.start.line or source.is_suppressed(place.start.line, finding.diagnostic.code):
                continue
            library = finding.diagnostic.data.library
            assert library is not None
            key = (place.start, library.path, library.line, finding.diagnostic.code)
            placed.setdefault(key, replace(finding.diagnostic, range=place))
    return list(placed.values())
