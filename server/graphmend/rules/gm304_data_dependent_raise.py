from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from .base import Rule, is_raise_guard


class DataDependentRaise(Rule):
    """What it does: flags an input check `if cond: raise ...` whose condition is a tensor value,
    e.g. `if (x < 0).any(): raise ValueError("negative")`.

    Why it breaks the graph: the `if` needs tensor data ("Data-dependent branching"), exactly like
    a predicated branch, but a `raise` cannot be computed on both sides and selected.

    Example:
        if torch.isnan(x).any():
            raise ValueError("NaN in input")

    Fix and its safety: `torch._assert_async(~cond)` keeps the check in the graph, but the error
    type and the moment it surfaces change, so such a fix can only ever be offered as unsafe.
    """

    code = "GM304"
    name = "data-dependent-raise"
    message = "Data-dependent branching: this tensor check before `raise` breaks the graph; consider `torch._assert_async`"
    severity = Severity.INFORMATION
    reason = "Data-dependent branching"
    reason_id = "gb0170"
    fixable = False
    node_types = (ast.If,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.If)
        return node.test if is_raise_guard(node) and analysis.is_data_dependent(node.test) else None
