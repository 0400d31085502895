from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import breaks_on
from .base import Rule, RuleDocs


class UnhandledRaise(Rule):
    """A `raise` every call of a compiled function reaches, with no handler in it."""

    docs = RuleDocs(
        what=(
            "reports, at information severity, a `raise` statement in the body of a compiled function itself "
            "(not under an `if`, a loop, a `with` or a `try`), so that every traced call reaches it, and no "
            "handler in the function catches it; not a stub whose body is the `raise` alone "
            "(`raise NotImplementedError`)."
        ),
        why=(
            "Dynamo traces the exception being raised and, with nothing in the frame to handle it, stops "
            'the graph there and raises it from Python ("Observed exception", gb0088, measured on torch 2.13): '
            "the graph before it is compiled, the rest of the call is not. torch 2.9 and 2.10 raise it without a "
            "break (`torch-version`, `BREAKS_SINCE`)."
        ),
        example=("@torch.compile\ndef step(x):\n    y = x * 2\n    raise RuntimeError(f'bad step {y.shape}')"),
        action=(
            "Raise outside the compiled function (check before calling it), or under a Python condition "
            "that is false when the code is traced."
        ),
        fix="no automatic fix: where the error belongs is the program's decision.",
    )

    code = "GM318"
    name = "unhandled-raise"
    message = "This `raise` ends every traced call; raise outside the compiled function instead"
    severity = Severity.INFORMATION
    reason = "Observed exception"
    reason_id = "gb0088"
    fixable = False
    about_a_value = False  # the break comes from the statement, not from a tensor value
    node_types = (ast.Raise,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        """Only the compiled frame's own body: a function Dynamo inlines may be called under a
        caller's `try`, and a `raise` under a condition may never be traced. A stub whose body is the
        `raise` alone (`def forward(...): raise NotImplementedError`) computes nothing to compile."""
        assert isinstance(node, ast.Raise)
        function = analysis.function
        if function is None or analysis.runs_inlined or not breaks_on("unhandled raise", analysis.module.torch_version):
            return None
        body = [s for s in function.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        return node if len(body) > 1 and any(statement is node for statement in body) else None
