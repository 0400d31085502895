from __future__ import annotations

import ast

from ..diagnostics import Applicability, Fix, Severity, TextEdit
from ..fixes.base import FixContext, Refusal
from ..fixes.in_graph import stale_site
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs


class StaleMessageSite(Rule):
    """A message kept in the graph that names a line or function other than its own."""

    docs = RuleDocs(
        what=(
            "flags a call of an in-graph message helper (what graphmend's logging and warnings fixes write) whose "
            "line or function argument is not where the call is: code above it moved, or the function was renamed."
        ),
        why=(
            "not a graph break. The operator builds the log record or the warning itself, with the line and "
            "function the call passes (the graph has no frame to read them from), so a stale literal makes the "
            "record name the wrong place: a log's `lineno`/`funcName`, a warning's location and its "
            "once-per-location filter."
        ),
        why_title="Why it matters",
        example='_logger_warning_in_graph(37, "forward", "inner sum %s", [y.sum()], False)  # on line 41',
        action="Write the call's own line and function.",
        fix="safe: the literals become the call's line and its function's name; nothing else changes.",
    )

    code = "GM204"
    name = "stale-message-site"
    message = "This in-graph message names another line or function than its own; write its own"
    severity = Severity.INFORMATION
    reason = "not a graph break: the message's record would name the wrong place"
    reason_id = None
    about_a_value = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if stale_site(node, analysis) else None

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        edits = tuple(TextEdit(ctx.source.node_range(argument), text) for argument, text in stale_site(node, analysis))
        return Fix("Write the call's own line and function", Applicability.SAFE, edits, names_its_line=True)
