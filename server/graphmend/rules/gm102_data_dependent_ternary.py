from __future__ import annotations

import ast

from ..analysis.break_lines import breaking_operand
from ..analysis.conditions import condition_refusal
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.gates import loop_gate
from ..fixes.predicate import predicate_ternary
from ..inference import FunctionAnalysis
from ..semantics import walk
from .base import Rule, RuleDocs


class DataDependentTernary(Rule):
    """A conditional expression `a if cond else b` on a tensor value in compiled code."""

    docs = RuleDocs(
        what=(
            "flags a conditional expression `a if cond else b` whose `cond` is a tensor "
            "value in compiled code, e.g. `h if h.std() > 1 else h * 2`, also in the body of a lambda the "
            "compiled function calls (kept in a list and picked by index, bound to a name, given to `sorted`)."
        ),
        why=(
            "the same as an `if` statement: Dynamo cannot know the value of the "
            "condition while tracing, so it ends the graph and evaluates it in Python."
        ),
        example="y = x if x.std() > 1 else x * 2",
        action="Decide the condition before the compiled call, or write `torch.where(cond, a, b)` by hand where both sides are safe to compute.",
        fix=(
            "`torch.where(cond, a, b)`; both operands are evaluated, so it is safe only "
            "when neither can fault or has side effects."
        ),
    )

    code = "GM102"
    name = "data-dependent-ternary"
    message = "This conditional expression tests a tensor value; use `torch.where`"
    reason = "Data-dependent branching"
    reason_id = "gb0170"
    node_types = (ast.IfExp,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.IfExp)
        return breaking_operand(node, analysis) if analysis.is_data_dependent(node.test) else None

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.IfExp)
        refused = condition_refusal(node.test, analysis)
        if refused is not None:
            return Refusal(refused)
        holder = _assignment_of(node, analysis)
        if holder is not None:
            gate = loop_gate(holder, analysis, ctx)
            if gate is not None:
                return gate
        return predicate_ternary(node, analysis, ctx)


def _assignment_of(node: ast.IfExp, analysis: FunctionAnalysis) -> ast.Assign | None:
    """The statement `flag = <node>`, when the conditional expression is a whole assigned value."""
    if analysis.function is None:
        return None
    return next(
        (s for s in walk(analysis.function.node) if isinstance(s, ast.Assign) and s.value is node),
        None,
    )
