from __future__ import annotations

import ast

from ..diagnostics import Applicability, Fix, Severity, TextEdit
from ..fixes.base import FixContext, Refusal
from ..fixes.conditions import condition_refusal
from ..fixes.deferral import literal
from ..fixes.purity import impurity
from ..fixes.shapes import is_scalar_condition
from ..fixes.text import comments_outside
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
        return node.test if is_raise_guard(node, analysis) and analysis.is_data_dependent(node.test) else None

    def fix(self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
        """`if cond: raise E(msg)` → `torch._assert_async(torch.logical_not(cond), msg)`: always unsafe,
        since the error becomes a RuntimeError raised when the device gets to it."""
        assert isinstance(node, ast.If)
        refused = condition_refusal(node.test, analysis)
        if refused is not None:
            return Refusal(refused)
        torch_name = ctx.torch_name
        if torch_name is None:
            return Refusal("torch is not imported as a module in this file")
        reason = impurity(node.test, analysis, set())
        if reason is not None:
            return Refusal(reason.replace("a branch", "the condition"))
        if not is_scalar_condition(node.test, analysis):
            return Refusal("the condition may have more than one element")
        raised = node.body[-1]  # after the statements that prepare its message (dropped with it)
        message = "assertion failed"
        # `raise E("msg")`, or `torch._assert(False, "msg")`
        exc = raised.exc if isinstance(raised, ast.Raise) else raised.value  # type: ignore[attr-defined]
        arguments = exc.args[1:] if isinstance(raised, ast.Expr) else getattr(exc, "args", [])
        if isinstance(exc, ast.Call) and arguments and isinstance(arguments[0], ast.Constant) and isinstance(arguments[0].value, str):
            message = arguments[0].value
        elif isinstance(exc, ast.Call) and arguments and isinstance(arguments[0], ast.JoinedStr):
            # The f-string's own words; its computed values need data the check cannot format.
            message = "".join(p.value if isinstance(p, ast.Constant) else "…" for p in arguments[0].values)  # type: ignore[misc]
        indent = ctx.source.lines[node.lineno - 1][: node.col_offset]
        condition = ctx.segment(node.test)
        comments = [indent + c + "\n" for c in comments_outside(ctx, node, [])]  # they stay, above the check
        text = "".join(comments) + f"{indent}{torch_name}._assert_async({torch_name}.logical_not({condition}), {literal(message)})"
        edit = TextEdit(ctx.line_range(node.lineno, node.end_lineno or node.lineno), text)
        title = "Check with `torch._assert_async` (unsafe: raises RuntimeError, possibly later, instead of the original exception)"
        if len(node.body) > 1:
            title = title[:-1] + "; the message's computed details are dropped)"
        return Fix(title, Applicability.UNSAFE, (edit,))
