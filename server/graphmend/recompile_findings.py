"""The recompile rules' predictions (GM6xx) as diagnostics: one per rule and line, with the guard,
how often it fails and the lines that make the value change as related information."""

from __future__ import annotations

import ast

from .diagnostics import Applicability, Diagnostic, FindingData, Fix, RelatedLocation, TextEdit
from .recompiles import Program, Values
from .regions import CompiledRegions
from .rules import RULES
from .rules.base import PredictedFix, ProgramRule
from .semantics import ModuleIndex
from .settings import Settings
from .source import SourceText

PROGRAM_RULES: tuple[type[ProgramRule], ...] = tuple(r for r in RULES if issubclass(r, ProgramRule))


def predicted_recompiles(
    index: ModuleIndex, regions: CompiledRegions, source: SourceText, settings: Settings, compile_lines: list[int]
) -> list[Diagnostic]:
    """The recompiles the file's program will meet, by the enabled GM6xx rules; a rule that fails on
    odd code costs its own predictions, never the file's other diagnostics."""
    rules = [rule() for rule in PROGRAM_RULES if settings.is_enabled(rule.code)]
    if not rules:
        return []
    program = Program(index, regions, source.lines, compile_lines, settings.target_torch)
    values = Values(program)
    found: dict[tuple[str, int], Diagnostic] = {}
    for rule in rules:
        try:
            predictions = list(rule.predict(program, values))
        except Exception:  # a bug in a rule must cost its predictions, never the file's diagnostics
            continue
        for prediction in predictions:
            line = prediction.node.lineno  # type: ignore[attr-defined]
            if (rule.code, line) in found or source.is_suppressed(line - 1, rule.code):
                continue
            found[(rule.code, line)] = Diagnostic(
                code=rule.code,
                message=prediction.message,
                severity=prediction.severity,
                range=source.node_range(prediction.node),
                related=tuple(
                    RelatedLocation(source.node_range(_header(node)), text, kind="cause")
                    for node, text in prediction.causes
                ),
                fix=_fix(prediction.fix, source) if prediction.fix is not None else None,
                data=FindingData(
                    rule=rule.name,
                    entry=prediction.entry,
                    no_fix=prediction.no_fix,
                    action=rule.docs.action,
                    guard=prediction.guard,
                    how_often=prediction.how_often,
                ),
            )
    return list(found.values())


def _fix(fix: PredictedFix, source: SourceText) -> Fix:
    """The rewrite as text edits: each node replaced by its template around its own text."""
    edits = []
    for node, template in fix.wraps:
        edits.append(TextEdit(source.node_range(node), template.format(source.segment(node))))
    applicability = Applicability.UNSAFE if fix.hazards else Applicability.SAFE
    return Fix(fix.title, applicability, tuple(edits), fix.hazards)


def _header(node: ast.AST) -> ast.AST:
    """A statement spanning lines is pointed at by its first line's expression (a loop by its target)."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return node.target
    if isinstance(node, ast.While):
        return node.test
    return node
