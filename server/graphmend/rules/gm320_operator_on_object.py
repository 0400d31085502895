from __future__ import annotations

import ast

from ..inference import FunctionAnalysis
from ..torch_api import breaks_on, traced_on
from .base import Rule, RuleDocs

# The operators Dynamo does not dispatch to a user class's method, with that method (measured on
# torch 2.9.1 to 2.14.1 for every binary, unary and comparison operator: only these two).
_METHODS = {ast.MatMult: "__matmul__", ast.Invert: "__invert__"}


class OperatorOnObject(Rule):
    """`a @ b` or `~a` on an object of a class of this file that defines the operator."""

    docs = RuleDocs(
        what=(
            "flags, in compiled code, `a @ b` and `~a` where `a` is an object of a class of this file that "
            "defines `__matmul__` / `__invert__` (the other operators, `+`, `*`, `-a`, comparisons..., run the "
            "class's method in the graph)."
        ),
        why=(
            "torch 2.11, 2.12 and 2.13 do not dispatch these two operators to a user class's method: "
            '"Failed to trace builtin operator `matmul`" (gb0059), measured on each release from 2.9 to 2.14; '
            "2.9, 2.10 and 2.14 run the method (`torch-version`)."
        ),
        example=("@torch.compile\ndef energy(v: Vector2):\n    return 0.5 * (v @ v)"),
        action="Call the method by name (`a.dot(b)`, or `a.__matmul__(b)`) instead of the operator.",
        fix=(
            "no automatic fix: the operator also tries the right operand's `__rmatmul__` when the left one "
            "returns `NotImplemented`, which a method call does not."
        ),
    )

    code = "GM320"
    name = "operator-on-object"
    message = "Dynamo cannot trace this operator on an object of a class; call its method by name"
    reason = "Failed to trace builtin operator"
    reason_id = "gb0059"
    fixable = False
    about_a_value = False  # the break comes from the operator, not from a tensor value
    node_types = (ast.BinOp, ast.UnaryOp)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, (ast.BinOp, ast.UnaryOp))
        function = analysis.function
        method = _METHODS.get(type(node.op))
        version = analysis.module.torch_version
        if (
            function is None
            or method is None
            or not breaks_on("operator on an object", version)
            or traced_on("operator on an object", version)
        ):
            return None
        operand = node.left if isinstance(node, ast.BinOp) else node.operand
        classes = analysis.module.regions.object_classes(operand, function)
        return node if any(cls.find_method(method) is not None for cls in classes) else None
