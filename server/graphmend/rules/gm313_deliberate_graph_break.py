from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs

# gb pages, measured on torch 2.13.0 (tests/dynamo_corpus/pos_deliberate_graph_break.py).
_SPLITS = {"torch._dynamo.graph_break": "gb0025", "torch._dynamo.step_unsupported": "gb4636"}


class DeliberateGraphBreak(Rule):
    """A call that splits the graph on purpose, left in compiled code."""

    docs = RuleDocs(
        what=(
            "reports, at information severity, a call of `torch._dynamo.graph_break()` or "
            "`torch._dynamo.step_unsupported()` in compiled code: a split someone asked for."
        ),
        why=(
            "the call exists to end the graph: Dynamo compiles what it has traced, runs the call in "
            'Python and starts a new graph ("Call to `torch._dynamo.graph_break()`", gb0025); after '
            "`step_unsupported()` it runs the rest of the frame without compiling it (gb4636). Each costs what "
            "any break costs: a device sync, a return to Python and lost fusion across it."
        ),
        example=(
            "h = self.encoder(x)\ntorch._dynamo.graph_break()  # while debugging a fused kernel\nreturn self.head(h)"
        ),
        action="Remove the call once the split is no longer needed.",
        fix="no automatic fix: only its author knows whether the split is still wanted.",
    )

    code = "GM313"
    name = "deliberate-graph-break"
    message = "This call splits the graph on purpose; remove it once the split is no longer needed"
    severity = Severity.INFORMATION
    reason = "Call to `torch._dynamo.graph_break()`"
    reason_id = "gb0025"
    also_reported_as = ("gb4636",)
    fixable = False
    about_a_value = False  # the break comes from the call or statement, not from a tensor value
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if analysis.qualified_name(node.func) in _SPLITS else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        return _SPLITS.get(analysis.qualified_name(reported.func) or "", self.reason_id)
