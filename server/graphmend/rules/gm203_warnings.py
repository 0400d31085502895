from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.deferral import defer_message
from ..inference import FunctionAnalysis
from ..messages import is_warning, passed_by_dynamo, registrations
from .base import Rule, RuleDocs


class WarningsWarn(Rule):
    """`warnings.warn` in compiled code."""

    docs = RuleDocs(
        what=(
            "flags `warnings.warn(...)` (also imported as `from warnings import warn`) in compiled code, "
            "unless the module registers `warnings.warn` with `torch._dynamo.config.reorderable_logging_functions` "
            "and Dynamo can replay the call after the graph (its arguments constants, f-strings or tensors; with a "
            "warning category it still breaks, gb0296)."
        ),
        why=(
            'Dynamo marks `warnings.warn` as a function it must skip ("Attempted '
            'to call function marked as skipped"), so it ends the graph at the call.'
        ),
        example='warnings.warn("input has NaNs", UserWarning)',
        action="Warn after the compiled call returns.",
        fix=(
            "keep the warning in the graph as an operator that keeps messages in order (torch >= 2.13), issued with "
            "`warnings.warn_explicit` for the call's own file, line, module and registry (GM204 keeps the line "
            "right); where that does not apply (a message that is not a string or f-string), defer it "
            "(refused in a function reached through a call, where Dynamo drops deferred calls). Unsafe: under "
            "warnings-as-errors it raises inside the graph, and what else changes is named."
        ),
    )

    code = "GM203"
    name = "warnings-in-compiled-code"
    message = "`warnings.warn` breaks the graph; defer it past the compiled region"
    reason = "Attempted to call function marked as skipped"
    reason_id = "gb0007"
    also_reported_as = ("gb0296",)  # a registered warning Dynamo cannot replay
    node_types = (ast.Call,)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        return defer_message(node, analysis, ctx)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if is_warning(node, analysis) and not passed_by_dynamo(node, analysis) else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: a registered `warnings.warn` with a category argument is "attempted
        # to reorder a debugging function that can't actually be reordered".
        assert isinstance(reported, ast.Call)
        registered = analysis.qualified_name(reported.func) in registrations(analysis)["replayed"]
        return "gb0296" if registered else self.reason_id
