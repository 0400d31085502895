"""Parse → index → compiled regions → per-function walk → rules → diagnostics, for one text."""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from functools import partial
from pathlib import Path

from .analysis.break_conditions import conditions_of, off_by_default, ruled_out
from .diagnostics import Diagnostic, FindingData, Fix, RelatedLocation, Severity
from .fixes.base import FixContext, Refusal, has_word
from .fixes.newly_compiled import loop_recompiles, random_moved_into_graph, with_hazard
from .fixes.text import keep_lost_comments
from .inference import FunctionAnalysis, ModuleAnalysis
from .project import ModuleSummary, summarize_module
from .project.library_calls import call_site_diagnostics
from .proof_records import with_verdicts
from .provenance import value_chain
from .recompile_findings import predicted_recompiles
from .recorded import RunInFile
from .regions import CompiledRegions, Entry, ProjectContext, Reach, compile_call_lines
from .resumption import resumed_call_breaks
from .rules import RULES, Rule
from .semantics import ModuleIndex, module_name_for
from .settings import Settings
from .source import Position, Range, SourceText
from .units import Layout, Unit, UnitCache, dependencies, reach_key

SYNTAX_ERROR_CODE = "GM001"
TOO_LARGE_CODE = "GM002"  # the file is over `max-file-size-kb`: not analysed, one note says so
NOT_ANALYSED_CODES = frozenset({SYNTAX_ERROR_CODE, TOO_LARGE_CODE})
BREAK_FAMILIES = ("GM1", "GM2", "GM3")  # rules whose fixes remove a graph break (GM4xx ones do not)


def check_text(
    text: str,
    path: Path | None = None,
    settings: Settings | None = None,
    context: ProjectContext | None = None,
    cache: UnitCache | None = None,
) -> list[Diagnostic]:
    """All diagnostics for one file's text; never raises for bad input (it reports GM001), and
    analyses nothing over the size limit (one GM002 note, at once). `context` says what the rest
    of the project compiles or calls in this file; `cache` holds the units of an earlier version
    of the same document (an editor's), so that only what changed is analysed again."""
    return _check(text, path, settings or Settings(), context or ProjectContext(), summarize=False, cache=cache)[0]


def check_and_summarize(
    text: str, path: Path, settings: Settings | None = None, cache: UnitCache | None = None
) -> tuple[list[Diagnostic], ModuleSummary | None]:
    """The file's diagnostics as if no other file compiled or called anything in it, and its
    project summary, from one parse (None when the file is not analysed: too large, unparsable)."""
    return _check(text, path, settings or Settings(), ProjectContext(), summarize=True, cache=cache)


def _check(
    text: str,
    path: Path | None,
    settings: Settings,
    context: ProjectContext,
    summarize: bool,
    cache: UnitCache | None = None,
) -> tuple[list[Diagnostic], ModuleSummary | None]:
    size = over_size_limit(text, settings)
    if size is not None:
        return ([_too_large(size, settings)] if settings.is_enabled(TOO_LARGE_CODE) else []), None
    source = SourceText(text)
    try:
        tree = ast.parse(source.code, filename=str(path or "<unknown>"))
    except SyntaxError as error:
        return ([_syntax_error(source, error)] if settings.is_enabled(SYNTAX_ERROR_CODE) else []), None
    except (ValueError, RecursionError, MemoryError) as error:
        return ([_file_error(_unparsable_reason(error))] if settings.is_enabled(SYNTAX_ERROR_CODE) else []), None
    try:
        if not summarize and "torch" not in text and "PreTrainedModel" not in text and context == ProjectContext():
            return [], None  # nothing can be compiled without naming torch or a transformers model base
        run = RunInFile(context.run, path, text, tree) if context.run and settings.runs and path else None
        if run is not None:  # the functions Dynamo traced in the recorded run are compiled
            context = replace(context, entries=(*context.entries, *run.entries))
        module_name = module_name_for(path)
        module_bases = context.module_bases | settings.module_bases
        index = ModuleIndex(
            tree,
            module_name,
            path is not None and path.name == "__init__.py",
            module_bases,
            may_have_walrus=":=" in text,
            plain_bases=context.plain_bases,
            foreign_aliases=dict(context.torch_aliases),
        )
        layout = Layout(tree, source, cache.words if cache is not None else None)
        callees = cache.callees(layout, index) if cache is not None else None
        compile_lines = compile_call_lines(source.code, source.lines, index)
        regions = CompiledRegions(index, settings.module_forward_is_compiled, context, compile_lines, callees)
        summary = None
        if summarize and path is not None:
            summary = summarize_module(
                index, regions, source, Path(os.path.realpath(path)), settings.module_forward_is_compiled
            )
        notebook = path is not None and path.suffix == ".ipynb"
        diagnostics = _analyse(index, regions, source, settings, layout, cache, notebook)
        if compile_lines:  # a program that compiles: the recompiles its calls will meet (GM6xx)
            diagnostics = sorted(
                diagnostics + predicted_recompiles(index, regions, source, settings, compile_lines),
                key=lambda d: (d.range.start, d.code),
            )
        if context.called_findings:  # breaks in libraries (and files not checked) that its calls lead to
            diagnostics += call_site_diagnostics(regions, source, context.called_findings, settings)
            diagnostics.sort(key=lambda d: (d.range.start, d.code))
        if run is not None:  # what the run met: findings confirmed, its other lines reported (GM5xx)
            diagnostics = run.merged(diagnostics, source, settings)
        if context.proofs:  # what the user's run proved of the fixes (`graphmend fix --prove`)
            diagnostics = with_verdicts(diagnostics, source.code, context.proofs)
        return diagnostics, summary
    except RecursionError:
        message = "code nested too deeply to analyse; graphmend skipped this file"
        return ([_file_error(message)] if settings.is_enabled(SYNTAX_ERROR_CODE) else []), None


def _unparsable_reason(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "code nested too deeply for Python's parser; graphmend cannot analyse this file"
    if isinstance(error, MemoryError):
        return "file too large to parse in memory; graphmend cannot analyse this file"
    return "source contains null bytes" if "null" in str(error) else f"cannot parse: {error}"


def _analyse(
    index: ModuleIndex,
    regions: CompiledRegions,
    source: SourceText,
    settings: Settings,
    layout: Layout,
    cache: UnitCache | None = None,
    notebook: bool = False,
) -> list[Diagnostic]:
    """The diagnostics of every reached function, unit by unit (see `units.py`): a unit whose
    text and dependencies are unchanged since `cache` saw it is not analysed again."""
    if not regions.reached:
        return []
    module = ModuleAnalysis(index, regions, settings.target_torch)
    rules = [rule() for rule in RULES if settings.is_enabled(rule.code)]
    groups: dict[str, list[Reach]] = {}
    for reach in regions.reached.values():
        unit = layout.unit_of(reach.chain[-1])
        groups.setdefault(unit.name if unit is not None else "", []).append(reach)
    indent = FixContext(source, index).indent_unit if cache is not None else ""  # part of each unit's key
    found: list[Diagnostic] = []
    for name, reaches in groups.items():
        unit = layout.by_name.get(name)
        key: tuple[object, ...] | None = None
        cached = None
        if cache is not None and unit is not None:  # the key is computed only for a cache to read
            key = (
                layout.reads(unit)[0],
                indent,
                tuple(rule.code for rule in rules),
                settings.layer_skip,
                settings.cuda_graphs,
                settings.target_torch,
                regions.context.base_attributes,
                regions.context.replaced_forwards,
                reach_key(layout, reaches, source),
            )
            cached = cache.lookup(unit, key, layout, partial(_file_has_word, layout, unit, index))
        if cached is not None:
            found += cached
            continue
        context = FixContext(
            source,
            index,
            layout.name_words(unit) if unit is not None else None,
            settings.layer_skip,
            settings.cuda_graphs,
            settings.target_torch,
            notebook=notebook,
        )
        collector = _Collector(source, rules, context, settings)
        for reach in reaches:
            collector.reach = reach
            try:
                FunctionAnalysis(module, reach.chain[-1], visitor=collector, entry=reach.entry).run()
            except RecursionError:
                continue  # pathologically deep expressions: skip this function, keep the others
        diagnostics = list(collector.diagnostics.values())
        if cache is not None and unit is not None and key is not None:
            cache.store(unit, key, dependencies(layout, regions, reaches), diagnostics, layout, context.asked_names)
        found += diagnostics
    if cache is not None:
        cache.forget_missing(layout)
    return sorted(found, key=lambda d: (d.range.start, d.code))


def _file_has_word(layout: Layout, unit: Unit, index: ModuleIndex, name: str) -> bool:
    """`FixContext.file_has_word` of the unit's fixes, answered for this version of the file."""
    return has_word(layout.name_words(unit), index, name)


def _swapped_forward(analysis: FunctionAnalysis) -> str | None:
    """A `forward` whose class decorator (found in another file) may set another `forward` at run
    time runs only when the decorator keeps it: the condition, as a finding states it."""
    function = analysis.function
    if function is None or function.owner is None or function.node.name != "forward":
        return None
    decorator = analysis.module.regions.context.forward_replaced_by(function.owner.name)
    return f"@{decorator.rsplit('.', 1)[-1]} keeps {function.owner.name}.forward" if decorator is not None else None


class _Collector:
    """Dispatches each visited node to the rules for its type and keeps one diagnostic per site."""

    def __init__(self, source: SourceText, rules: list[Rule], fix_context: FixContext, settings: Settings) -> None:
        self.source = source
        self.settings = settings
        self.fix_context = fix_context
        self.by_type: dict[type[ast.AST], list[Rule]] = {}
        for rule in rules:
            for node_type in rule.node_types:
                self.by_type.setdefault(node_type, []).append(rule)
        self.diagnostics: dict[tuple[str, int], Diagnostic] = {}
        self.reach: Reach | None = None

    def __call__(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> None:
        rules = self.by_type.get(type(node))
        if not rules:
            return
        for rule in rules:
            key = (rule.code, id(node))
            if key in self.diagnostics:
                continue
            recorded = self.fix_context.cuda_graph_scope(self.reach.entry) if rule.cuda_graphs and self.reach else None
            if rule.cuda_graphs and recorded is None:
                continue  # nothing asks for CUDA graphs here: what keeps them out costs nothing
            target = rule.check(node, analysis, in_condition)
            if target is None:
                continue
            diagnostic_range = self._range(target)
            if self.source.is_suppressed(diagnostic_range.start.line, rule.code):
                continue
            subject = target.test if isinstance(target, ast.If) else target  # an `if (` reported at its line
            conditions = conditions_of(node, analysis)
            if ruled_out(conditions, self.settings):
                continue  # cannot happen the way the code is run (`assume-training`, `assume-dtypes`)
            assert self.reach is not None
            outcome = self._fix(rule, node, target, analysis)
            message = rule.message_for(target, analysis)
            only_when = [condition.text for condition in conditions]
            swapped = _swapped_forward(analysis)
            if swapped is not None:
                only_when.append(swapped)
            severity = rule.severity
            switch = off_by_default(conditions, analysis)
            if switch is not None and severity is Severity.WARNING:
                severity = Severity.INFORMATION  # not the break a plain compile meets
            # The message stays the rule's one sentence; what qualifies it is data, shown by the hover,
            # the text output's notes and JSON: where CUDA graphs are asked for, when it breaks, why no fix.
            refusal = outcome if isinstance(outcome, Refusal) else None
            data = FindingData(
                rule=rule.name,
                entry=self.reach.entry.function.qualname,
                nested="called from compiled code" if analysis.runs_inlined else None,
                cuda_graphs=recorded,
                only_when=tuple(only_when),
                no_fix=refusal.reason if refusal is not None else None,
                action=refusal.action if refusal is not None else None,
                off_by_default=switch,
            )
            self.diagnostics[key] = Diagnostic(
                code=rule.code,
                message=message,
                severity=severity,
                range=diagnostic_range,
                reason_id=rule.reason_id_for(target, analysis),
                related=(
                    self._related(self.reach),
                    *(value_chain(subject, analysis, self.source) if rule.about_a_value else ()),
                    *resumed_call_breaks(subject, analysis, self.source),
                    *rule.related_for(target, analysis, self.source),
                ),
                fix=outcome if isinstance(outcome, Fix) else None,
                data=data,
            )

    def _range(self, target: ast.AST) -> Range:
        """Where a diagnostic goes: the node, except that a method call spanning lines starts at
        the method's name, the line CPython (and so Dynamo's break report) gives the call, and an
        `if` (or a conditional expression) reported for its test covers it up to the test's end."""
        found = self.source.node_range(target)
        if isinstance(target, ast.ClassDef):  # the header, `class Name`
            return Range(
                found.start, self.source.position(target.lineno, target.col_offset + 6 + len(target.name.encode()))
            )
        if isinstance(target, (ast.If, ast.IfExp)):  # the header, from `if` to the end of its test
            return Range(found.start, self.source.node_range(target.test).end)
        func = target.func if isinstance(target, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_lineno > target.lineno:  # type: ignore[attr-defined]
            start = self.source.position(func.end_lineno, (func.end_col_offset or 0) - len(func.attr.encode("utf-8")))
            return Range(start, found.end)
        return found

    def _fix(self, rule: Rule, node: ast.AST, target: ast.AST, analysis: FunctionAnalysis) -> Fix | Refusal | None:
        context = self.fix_context
        context.torch_import_requested = False
        try:
            outcome = rule.fix(node, target, analysis, context)
        except Exception as error:  # a bug in a rewrite must cost the fix, never the diagnostics
            return Refusal(f"internal error while computing it ({type(error).__name__})")
        if isinstance(outcome, Fix) and context.torch_import_requested:
            outcome = replace(outcome, edits=(context.torch_import_edit(), *outcome.edits))
        if isinstance(outcome, Fix) and rule.code.startswith(BREAK_FAMILIES):
            for hazard in (random_moved_into_graph(node, analysis), loop_recompiles(node, analysis)):
                if hazard is not None:
                    outcome = with_hazard(outcome, hazard)
        return keep_lost_comments(outcome, context) if isinstance(outcome, Fix) else outcome

    def _related(self, reach: Reach) -> RelatedLocation:
        entry = reach.entry
        if entry.origin is not None:  # compiled because of another file: point there
            origin = entry.origin
            between = [*entry.via, *(f.qualname for f in reach.chain[:-1])]
            via = " via " + " → ".join(f"`{name}`" for name in between) if between else ""
            return RelatedLocation(
                Range(Position(origin.line, origin.character), Position(origin.line, origin.end_character)),
                f"`{reach.chain[-1].qualname}` is {entry.why}{via}",
                origin.path,
            )
        if len(reach.chain) > 1:
            via = " → ".join(f"`{f.qualname}`" for f in reach.chain[1:])
            return RelatedLocation(
                _definition_range(self.source, entry),
                f"reached from compiled `{entry.function.qualname}` ({entry.why}) via {via}",
            )
        return RelatedLocation(
            self.source.node_range(entry.site)
            if entry.site is not entry.function.node
            else _definition_range(self.source, entry),
            f"`{entry.function.qualname}` is compiled: {entry.why}",
        )


def _definition_range(source: SourceText, entry: Entry) -> Range:
    """The function's name in its `def` line."""
    node = entry.function.node
    line = source.lines[node.lineno - 1] if node.lineno - 1 < len(source.lines) else ""
    start = source.position(node.lineno, node.col_offset)
    column = line.find(node.name, start.character)
    if column < 0:
        return Range(start, start)
    return Range(Position(start.line, column), Position(start.line, column + len(node.name)))


def _syntax_error(source: SourceText, error: SyntaxError) -> Diagnostic:
    line = max((error.lineno or 1) - 1, 0)
    # SyntaxError.offset is 1-based and counts characters (code points) of the line.
    column = max((error.offset or 1) - 1, 0)
    end_line = max((error.end_lineno or error.lineno or 1) - 1, line)
    end_column = max((error.end_offset or error.offset or 1) - 1, column if end_line == line else 0)
    return Diagnostic(
        code=SYNTAX_ERROR_CODE,
        message=f"SyntaxError: {error.msg}; graphmend cannot analyse this file until it parses",
        severity=Severity.ERROR,
        range=Range(Position(line, column), Position(end_line, end_column)),
    )


def over_size_limit(text: str, settings: Settings) -> int | None:
    """The text's size in bytes when it is over `max-file-size-kb`, else None (cheap for small texts)."""
    limit = settings.max_file_size_kb * 1024
    if not limit or len(text) * 4 <= limit:  # a character is at most four bytes
        return None
    size = len(text.encode("utf-8", errors="surrogatepass"))
    return size if size > limit else None


def _too_large(size: int, settings: Settings) -> Diagnostic:
    return too_large_note(size, f"the {settings.max_file_size_kb} KB limit (setting `max-file-size-kb`, 0 for none)")


def too_large_note(size: int, limit: str) -> Diagnostic:
    """GM002 at the file's start: `size` bytes are over `limit` (in words), so nothing was analysed."""
    origin = Position(0, 0)
    return Diagnostic(
        code=TOO_LARGE_CODE,
        message=f"File too large to analyse: {size / 2**20:.1f} MB, over {limit}; graphmend skipped it",
        severity=Severity.INFORMATION,
        range=Range(origin, origin),
    )


def _file_error(message: str) -> Diagnostic:
    origin = Position(0, 0)
    return Diagnostic(code=SYNTAX_ERROR_CODE, message=message, severity=Severity.ERROR, range=Range(origin, origin))
