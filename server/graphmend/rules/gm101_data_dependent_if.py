from __future__ import annotations

import ast

from ..analysis.break_lines import breaking_operand
from ..analysis.conditions import condition_refusal
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.gates import loop_gate
from ..fixes.masked import unguard_masked_writes
from ..fixes.predicate import predicate_if
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import walk
from .base import Rule, RuleDocs, is_raise_guard


class DataDependentIf(Rule):
    """An `if`/`elif` on a tensor value in compiled code."""

    docs = RuleDocs(
        what=(
            "flags an `if`/`elif` whose condition is a tensor value in compiled code, e.g. "
            "`if x.sum() > 10:`, `if torch.any(x > 0):`, `if not mask.any():`, or a name assigned such a "
            "value (`seq_len = torch.max(ids) + 1` then `if seq_len > limit:`)."
        ),
        why=(
            "Dynamo traces with fake tensors that have shapes but no values, so it "
            "cannot decide which branch runs. It compiles the graph so far, runs the `if` in Python (a "
            "device-to-host sync) and starts a new graph after it."
        ),
        example=("if x.sum() > 10:\n    z = a + b\nelse:\n    z = a * b"),
        action="Decide the condition before the compiled call, or write the `torch.where` by hand where both sides are safe to compute.",
        fix=(
            "compute both branches and select with `torch.where(cond, a_val, b_val)`. "
            "Safe when both branches are side-effect free and cannot fault when run unconditionally; the "
            "fix is offered only when that can be shown. A Python part of the condition stays a Python "
            "`if` around the rewrite. Inside a loop, an `if` that skips a layer (LayerDrop: `continue`, a "
            '`to_drop` flag, a branch that runs the layer) becomes "run the layer, keep its result where it '
            'was not skipped" with `torch.where` (cheaper at common LayerDrop rates), or with the '
            '`layer-skip = "cond"` setting "run the layer only where it is not skipped" with `torch.cond` '
            "where the layer's block only replaces tensors; the title says which and why. Always unsafe. "
            "A check that only "
            "guards writes through a boolean mask (`if m.any(): x[m] = v`) is dropped: with no true element "
            "the write changes nothing."
        ),
    )

    code = "GM101"
    name = "data-dependent-if"
    message = "This `if` tests a tensor value; select with `torch.where` instead"
    reason = "Data-dependent branching"
    reason_id = "gb0170"
    also_reported_as = ("gb0033",)
    node_types = (ast.If,)

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13: a NumPy number's membership in a list reads it as data first
        # ("Data dependent operator"); every other test breaks at the branch.
        test = reported.test if isinstance(reported, ast.If) else reported
        if (
            isinstance(test, ast.Compare)
            and any(isinstance(op, (ast.In, ast.NotIn)) for op in test.ops)
            and analysis.kind(test.left) is Kind.NUMPY
        ):
            return "gb0033"
        return self.reason_id

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.If)
        if is_raise_guard(node, analysis) or not analysis.is_data_dependent(node.test):
            return None
        return breaking_operand(node, analysis)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.If)
        fix = unguard_masked_writes(node, analysis, ctx)  # drops the test: no torch call, NumPy too
        if fix is not None:
            return fix
        refused = condition_refusal(node.test, analysis, flags=False)
        if refused is not None:
            return Refusal(refused)
        fix = loop_gate(node, analysis, ctx)  # takes a flag that is a tensor on some paths
        if fix is not None:
            return fix
        refused = condition_refusal(node.test, analysis)
        if refused is not None:
            return Refusal(refused)
        return predicate_if(_chain_head(node, analysis, ctx), analysis, ctx)


def _chain_head(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> ast.If:
    """The `if` that starts the chain an `elif` belongs to: the whole chain is rewritten at once."""
    if analysis.function is None:
        return node
    parents = {
        id(candidate.orelse[0]): candidate
        for candidate in walk(analysis.function.node)
        if isinstance(candidate, ast.If) and len(candidate.orelse) == 1 and isinstance(candidate.orelse[0], ast.If)
    }
    current = node
    while id(current) in parents and ctx.source.lines[current.lineno - 1][current.col_offset :].startswith("elif"):
        current = parents[id(current)]
    return current
