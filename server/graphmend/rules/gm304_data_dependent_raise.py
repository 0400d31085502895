from __future__ import annotations

import ast
from typing import Any

from ..analysis.conditions import (
    ConditionError,
    condition_refusal,
    negated,
    python_value_claim,
    split,
    static_text,
    tensor_logic,
)
from ..analysis.purity import impurity
from ..diagnostics import Applicability, Fix, Severity, TextEdit
from ..fixes.base import FixContext, Refusal
from ..fixes.deferral import literal
from ..fixes.text import comments_outside
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs, is_raise_guard


class DataDependentRaise(Rule):
    """An input check `if cond: raise ...` (or an `assert`) on a tensor value."""

    docs = RuleDocs(
        what=(
            "flags an input check `if cond: raise ...` whose condition is a tensor value, "
            'e.g. `if (x < 0).any(): raise ValueError("negative")`; and an `assert` that tests a tensor before '
            "the last operand of an `and`/`or` (`assert a.isnan().sum() == 0 and b.isnan().sum() == 0`)."
        ),
        why=(
            'the `if` needs tensor data ("Data-dependent branching"), exactly like '
            "a predicated branch, but a `raise` cannot be computed on both sides and selected. Dynamo turns "
            "`assert <tensor>` into an in-graph check, but only for the assert's last jump: the jump of an "
            "earlier `and`/`or` operand is a plain data-dependent branch (measured on torch 2.13)."
        ),
        example=('if torch.isnan(x).any():\n    raise ValueError("NaN in input")'),
        action="Check the inputs before the compiled call, or use `torch._assert_async(cond, msg)` if an error raised later by the device will do.",
        fix=(
            "`torch._assert_async(~cond)` keeps the check in the graph, but the error "
            "type and the moment it surfaces change, so such a fix can only ever be offered as unsafe. Python "
            "operands leading an `and` stay a Python `if` around the check (`if labels is not None and "
            "labels.max() >= n:` checks the labels only when there are some). An "
            "`assert a and b, msg` becomes one assert per operand, in order, with the same message (unsafe for "
            "the same reason: under compile a failing check raises RuntimeError); an `or` is left as is. Refused "
            "where a name of the check is a tensor only by its annotation or for some callers: with a Python "
            "number there the check is a Python bool, on which `torch._assert_async` raises TypeError."
        ),
    )

    ASSERT_MESSAGE = "This `assert` tests a tensor before its last `and`/`or`; assert each part on its own"

    code = "GM304"
    name = "data-dependent-raise"
    message = "This tensor check before `raise` breaks the graph; consider `torch._assert_async`"
    severity = Severity.INFORMATION
    reason = "Data-dependent branching"
    reason_id = "gb0170"
    fixable = False
    node_types = (ast.If, ast.Assert)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if isinstance(node, ast.Assert):
            test = node.test
            joined = isinstance(test, ast.BoolOp) and any(analysis.is_data_dependent(v) for v in test.values[:-1])
            return node if joined else None
        assert isinstance(node, ast.If)
        return node.test if is_raise_guard(node, analysis) and analysis.is_data_dependent(node.test) else None

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        return self.ASSERT_MESSAGE if isinstance(reported, ast.Assert) else self.message

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        """`if cond: raise E(msg)` → `torch._assert_async(~cond, msg)`: always unsafe,
        since the error becomes a RuntimeError raised when the device gets to it. The Python operands
        leading an `and` stay a Python `if` around the check (`if labels is not None and
        labels.max() >= n:` checks the labels only when there are some, as it did)."""
        if isinstance(node, ast.Assert):
            return _split_assert(node, analysis, ctx)
        assert isinstance(node, ast.If)
        parts = split(node.test, analysis)
        test = parts.rest
        refused = condition_refusal(test, analysis)
        if refused is not None:
            return Refusal(refused)
        claimed = python_value_claim(test, analysis)
        if claimed is not None:  # `torch._assert_async(True)` raises TypeError where the `if` passed
            return Refusal(
                f"{claimed}: with a Python value the check is a Python bool, which `torch._assert_async` rejects"
            )
        torch_name = ctx.torch_name
        if torch_name is None:
            return Refusal(ctx.no_torch_name)
        reason = impurity(test, analysis, set())
        if reason is not None:
            return Refusal(reason.replace("a branch", "the condition"))
        # A condition of more than one element needs no refusal: `if` and `torch._assert_async` both
        # raise "Boolean value of Tensor with more than one value is ambiguous" (RuntimeError) on it.
        raised = node.body[-1]  # after the statements that prepare its message (dropped with it)
        message = "assertion failed"
        # `raise E("msg")`, or `torch._assert(False, "msg")`
        exc: Any = raised.exc if isinstance(raised, ast.Raise) else raised.value  # type: ignore[attr-defined]
        arguments = exc.args[1:] if isinstance(raised, ast.Expr) else getattr(exc, "args", [])
        if (
            isinstance(exc, ast.Call)
            and arguments
            and isinstance(arguments[0], ast.Constant)
            and isinstance(arguments[0].value, str)
        ):
            message = arguments[0].value
        elif isinstance(exc, ast.Call) and arguments and isinstance(arguments[0], ast.JoinedStr):
            # The f-string's own words; its computed values need data the check cannot format.
            message = "".join(p.value if isinstance(p, ast.Constant) else "…" for p in arguments[0].values)  # type: ignore[misc]
        try:  # what must hold, as a bool tensor: `not` and `and`/`or` written with `~`, `&`, `|`
            check = tensor_logic(negated(test), analysis, ctx.segment, torch_name)
        except ConditionError as error:
            return Refusal(str(error))
        indent = ctx.source.lines[node.lineno - 1][: node.col_offset]
        comments = [indent + c + "\n" for c in comments_outside(ctx, node, [])]  # they stay, above the check
        assertion = f"{torch_name}._assert_async({check}, {literal(message)})"
        if parts.static:
            assertion = f"if {static_text(parts.static, ctx.segment)}:\n{indent}{ctx.indent_unit}{assertion}"
        text = "".join(comments) + f"{indent}{assertion}"
        edit = TextEdit(ctx.line_range(node.lineno, node.end_lineno or node.lineno), text)
        hazards = ["raises RuntimeError, possibly later, instead of the original exception"]
        if len(node.body) > 1:
            hazards.append("the message's computed details are dropped")
        return Fix("Check with `torch._assert_async`", Applicability.UNSAFE, (edit,), tuple(hazards))


def _split_assert(node: ast.Assert, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """`assert a and b, msg` → `assert a, msg` then `assert b, msg`: the same checks in the same
    order, each one Dynamo can keep in the graph."""
    test = node.test
    assert isinstance(test, ast.BoolOp)
    if isinstance(test.op, ast.Or):
        return Refusal("an `or` of checks cannot be split into asserts; test the tensors with `|` into one tensor")
    if comments_outside(ctx, node, []) or ctx.source.lines[node.lineno - 1][: node.col_offset].strip():
        return Refusal("the assert shares its lines with comments or other code")
    indent = ctx.source.lines[node.lineno - 1][: node.col_offset]
    message = f", {ctx.segment(node.msg)}" if node.msg is not None else ""
    lines = [f"{indent}assert {ctx.segment(v)}{message}" for v in test.values]
    return Fix(
        "Assert each condition on its own",
        Applicability.UNSAFE,
        (TextEdit(ctx.line_range(node.lineno, node.end_lineno or node.lineno), "\n".join(lines)),),
        ("under torch.compile a failing check raises RuntimeError from the graph instead of AssertionError",),
    )
