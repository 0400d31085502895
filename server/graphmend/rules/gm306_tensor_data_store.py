from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..regions import UNKNOWN_VALUE
from .base import Rule, RuleDocs


class TensorDataStore(Rule):
    """A store to `.data` of a tensor the compiled function made."""

    docs = RuleDocs(
        what=(
            "flags `t.data = ...` where `t` is a tensor the compiled function itself "
            "computed (a local name every binding of which is the result of an operation)."
        ),
        why=(
            "Dynamo replaces `.data` only of a tensor created outside the compiled "
            'region: "Failed to mutate tensor data attribute" (gb0056). On inputs and parameters '
            "(`self.weight.data = ...`) the store traces, and is not flagged (measured on torch 2.13)."
        ),
        example=("y = x * 2\ny.data = x * 3"),
        action="Compute the new value as a tensor of its own, or store `.data` outside the compiled region.",
        fix=(
            "no rewrite keeps the aliasing semantics of `.data` in general; compute the "
            "new value as a tensor of its own (`y = x * 3`), or do the store outside the compiled region."
        ),
    )

    code = "GM306"
    name = "tensor-data-store"
    message = "Replacing `.data` of a tensor made here breaks the graph; use a new tensor"
    severity = Severity.INFORMATION
    reason = "Failed to mutate tensor data attribute"
    reason_id = "gb0056"
    fixable = False
    node_types = (ast.Assign,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Assign)
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "data" and _computed_here(target.value, analysis):
                return target
        return None


def _computed_here(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A local name, not a parameter, every binding of which is an operation's result: of a tensor
    kind, or arithmetic and `torch.*` calls (what a `.data` store makes a tensor of). Another name
    or an attribute may be an input or a parameter, whose `.data` can be replaced."""
    function = analysis.function
    if function is None or not isinstance(expr, ast.Name):
        return False
    if expr.id in function.parameter_names:
        return False
    values = analysis.module.regions.assigned_values(function).get(expr.id, [])
    if not values or any(isinstance(value, (ast.Name, ast.Attribute)) or value is UNKNOWN_VALUE for value in values):
        return False
    return analysis.kind(expr).is_tensor or all(_makes_tensor(value, analysis) for value in values)


def _makes_tensor(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    qualname = analysis.qualified_name(value.func) if isinstance(value, ast.Call) else None
    return qualname is not None and qualname.startswith("torch.")
