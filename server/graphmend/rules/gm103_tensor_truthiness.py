from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs


class TensorTruthiness(Rule):
    """`not`/`and`/`or` on tensor values outside an `if`/`while` condition."""

    docs = RuleDocs(
        what=(
            "flags `not t`, `t and u`, `t or u` on tensor values outside an `if`/`while` "
            "condition, e.g. `keep = not mask.any()` or `ok = x.any() or y.any()`."
        ),
        why=(
            "`not` and `and`/`or` ask Python for the truth value of the tensor, "
            "which needs its data; Dynamo cannot trace that and breaks (for `not`, it may abandon the whole "
            "frame)."
        ),
        example="keep = not mask.any()",
        action="Keep the logic in the graph with `~t`, `torch.logical_and` or `torch.logical_or`.",
        fix=(
            "use tensor logic that stays in the graph: `~t`/`torch.logical_not(t)`, "
            "`torch.logical_and`, `torch.logical_or`. The result is then a bool tensor, not a Python bool, "
            "which is why graphmend does not rewrite it itself (the finding says so)."
        ),
    )

    code = "GM103"
    name = "tensor-truthiness"
    message = "`not`/`and`/`or` read a tensor's truth value; use `torch.logical_*` instead"
    reason = "Data-dependent branching"
    fixable = False  # the value would become a bool tensor (see `fix`)
    reason_id = "gb0170"
    also_reported_as = ("gb0033",)
    node_types = (ast.BoolOp, ast.UnaryOp)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        return Refusal(
            "the value would become a bool tensor instead of a Python bool; where a tensor is fine, "
            "write `torch.logical_not`/`torch.logical_and`/`torch.logical_or`"
        )

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: `not t` as a value reads the element ("Data dependent operator",
        # gb0033); `t and u` jumps on it ("Data-dependent branching", gb0170).
        return "gb0033" if isinstance(reported, ast.UnaryOp) else self.reason_id

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if in_condition:
            return None
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not) and analysis.is_data_dependent(node.operand):
                return node
            return None
        assert isinstance(node, ast.BoolOp)
        # Python tests every operand but the last one; the last is returned as the value.
        return node if any(analysis.is_data_dependent(v) for v in node.values[:-1]) else None
