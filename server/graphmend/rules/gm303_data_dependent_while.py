from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs


class DataDependentWhile(Rule):
    """A `while` loop on a tensor value."""

    docs = RuleDocs(
        what=("flags a `while` loop whose condition is a tensor value, e.g. `while z.sum() < x.sum():`."),
        why=(
            "every test of the condition needs tensor data, so Dynamo breaks at "
            'the loop on every iteration ("Data-dependent branching").'
        ),
        example=("while z.sum() < limit:\n    z = z * 2"),
        action="Bound the loop by a Python number and mask the updates, or use `torch._higher_order_ops.while_loop`.",
        fix=(
            "not a `torch.where` rewrite: the trip count depends on data. Bound the loop "
            "by a Python number and mask the updates, or use `torch._higher_order_ops.while_loop`."
        ),
    )

    code = "GM303"
    name = "data-dependent-while"
    message = "This `while` tests a tensor value on every iteration; bound the loop statically"
    severity = Severity.INFORMATION
    reason = "Data-dependent branching"
    reason_id = "gb0170"
    fixable = False
    node_types = (ast.While,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.While)
        return node.test if analysis.is_data_dependent(node.test) else None
