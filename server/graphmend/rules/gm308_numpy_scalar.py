from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..torch_api import is_numpy_scalar_draw
from .base import Rule, RuleDocs


class NumpyScalar(Rule):
    """A NumPy value read as a Python number in compiled code."""

    docs = RuleDocs(
        what=(
            "flags, in compiled code, a NumPy value read as a Python number: `a.item()` on a "
            "NumPy value, NumPy draws of one number (`np.random.random()`, `np.random.rand()`, "
            "`np.random.uniform(0, 1)`, `np.random.randint(0, 5)`), and `np.random.choice` in every form "
            "(`np.random.choice(np.arange(n), k, replace=False)` samples by reading tensor data)."
        ),
        why=(
            "Dynamo traces NumPy inside compiled code as tensors (`torch._numpy`), so "
            'a NumPy number is tensor data: reading it is "Data dependent operator" (gb0033), measured on '
            "torch 2.13 for each form above (`np.random.rand(3)`, an array, does not break by itself)."
        ),
        example=(
            "epsilon = np.random.rand(1).item()           # wav2vec2's SpecAugment masking\n"
            "layerdrop_prob = np.random.random()          # a LayerDrop draw\n"
            "idx = np.random.choice(np.arange(n), k, replace=False)  # SpecAugment's span starts"
        ),
        action="Draw the number with torch (another random stream), or outside the compiled region.",
        fix=(
            "no automatic fix: `torch.rand` draws from another random stream, so the "
            "values change. Draw with torch and keep the value a tensor, or draw outside the compiled region."
        ),
    )

    code = "GM308"
    name = "numpy-scalar-in-compiled-code"
    message = "NumPy runs as tensors here, so reading a NumPy number breaks the graph; draw with torch"
    severity = Severity.INFORMATION
    reason = "Data dependent operator"
    reason_id = "gb0033"
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "item"
            and not node.args
            and analysis.kind(func.value) is Kind.NUMPY
        ):
            return node
        return node if is_numpy_scalar_draw(analysis.qualified_name(node.func), node) else None
