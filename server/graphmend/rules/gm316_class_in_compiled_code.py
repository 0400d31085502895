from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import breaks_on
from .base import Rule, RuleDocs


class ClassInCompiledCode(Rule):
    """A `class` statement executed by compiled code."""

    docs = RuleDocs(
        what="flags a `class` statement inside a compiled function (or a function compiled code calls).",
        why=(
            "building a class runs `__build_class__`, which Dynamo does not trace: it ends the graph at the "
            '`class` line ("Invalid call to __build_class__", gb8977), on every call, since the class is '
            "built anew each time. torch 2.9 builds it without a break (`torch-version`, `BREAKS_SINCE`)."
        ),
        example=("def forward(self, x):\n    class Holder:\n        scale = 2.0\n    return x * Holder.scale"),
        action="Define the class at module level and use it from the compiled function.",
        fix=(
            "no automatic fix: moving the class changes what its body can see (the function's locals) and "
            "makes one class where each call made a new one."
        ),
    )

    code = "GM316"
    name = "class-in-compiled-code"
    message = "Defining a class in compiled code breaks the graph at every call; define it at module level"
    severity = Severity.INFORMATION
    reason = "Invalid call to __build_class__"
    reason_id = "gb8977"
    fixable = False
    about_a_value = False  # the break comes from the call or statement, not from a tensor value
    node_types = (ast.ClassDef,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.ClassDef)
        return node if breaks_on("class statement", analysis.module.torch_version) else None
