from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.deferral import defer_message
from ..inference import FunctionAnalysis
from ..messages import is_print, passed_by_dynamo, registrations
from .base import Rule, RuleDocs


class PrintCall(Rule):
    """The builtin `print` in compiled code."""

    docs = RuleDocs(
        what=(
            "flags a call of the builtin `print` in compiled code. A module-level or local "
            "function named `print` is not the builtin and is not flagged, nor is a print the module registers "
            "with `torch._dynamo.config.reorderable_logging_functions` whose arguments are constants, f-strings or "
            "tensors and whose keywords are constants (Dynamo replays it after the graph; with a shape, a list or "
            "`file=` it still breaks)."
        ),
        why=(
            "`print` writes to a stream, a side effect Dynamo cannot put in a "
            "graph. It compiles what it has, runs the print in Python and starts a new graph."
        ),
        example=('x = torch.relu(x)\nprint("tensor:", x)\nreturn torch.sin(x)'),
        action="Print after the compiled call returns, or print outside the compiled function.",
        fix=(
            "keep the print in the graph as an operator that keeps messages in order (torch >= 2.13): the same text, in "
            "order, on every call, with the values of its moment, also where Dynamo inlines the function (a "
            "submodule, `super().forward()`, `checkpoint`). Where its values are not tensors or Python values "
            "Dynamo folds (a shape), the print is deferred (a function registered in "
            "`torch.compiler.config.reorderable_logging_functions`), which Dynamo drops where it inlines the "
            "function. Always unsafe, with what changes named: a tensor's `grad_fn=` text under aot backends, "
            "export, CUDA graphs; for a deferral, the inlined drop, strict export and a later error in the graph."
        ),
    )

    code = "GM201"
    name = "print-in-compiled-code"
    message = "`print` breaks the graph; defer it until after the compiled region"
    reason = "Failed to trace builtin operator"
    reason_id = "gb0059"
    also_reported_as = ("gb0296",)  # a registered print Dynamo cannot replay
    node_types = (ast.Call,)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        return defer_message(node, analysis, ctx)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if is_print(node, analysis) and not passed_by_dynamo(node, analysis) else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: a registered print with a shape argument is "attempted to
        # reorder a debugging function that can't actually be reordered".
        return "gb0296" if "builtins.print" in registrations(analysis)["replayed"] else self.reason_id
