from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs

# torch functions (and the same-named tensor methods) whose Python bool result depends on the
# tensors' values: "Data dependent operator" (gb0033), each measured on torch 2.13.0.
_BOOL_OPS = frozenset({"equal", "allclose", "is_nonzero"})


class DataDependentBoolOp(Rule):
    """A torch op returning a Python bool that depends on tensor values."""

    docs = RuleDocs(
        what=(
            "flags `torch.equal(a, b)`, `torch.allclose(a, b)` and `torch.is_nonzero(t)` (and the "
            "tensor methods `a.equal(b)`, `a.allclose(b)`, `t.is_nonzero()` on a value known to be a tensor) in "
            "compiled code."
        ),
        why=(
            "each returns a Python `bool` computed from the tensors' values, which a graph cannot hold: "
            'Dynamo ends the graph to run it ("Data dependent operator", gb0033), whether or not an `if` '
            "reads the result."
        ),
        example=("if torch.equal(mask, self.cached_mask):\n    return self.cached_bias"),
        action=(
            "Keep the comparison a tensor, e.g. `(a == b).all()` when the shapes are known to match, "
            "`torch.isclose(a, b).all()` for `allclose`, and select with `torch.where`."
        ),
        fix=(
            "no automatic fix: `torch.equal` is False for tensors of different shapes where `(a == b).all()` "
            "broadcasts or raises, and what follows the test decides whether a tensor result can replace it."
        ),
    )

    code = "GM315"
    name = "data-dependent-bool-op"
    message = "This op returns a Python bool computed from tensor values, which breaks the graph; keep the comparison a tensor"
    severity = Severity.INFORMATION
    reason = "Data dependent operator"
    reason_id = "gb0033"
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        func = node.func
        qualname = analysis.qualified_name(func)
        if qualname is not None:
            return node if qualname.startswith("torch.") and qualname.removeprefix("torch.") in _BOOL_OPS else None
        if not isinstance(func, ast.Attribute) or func.attr not in _BOOL_OPS:
            return None
        return node if analysis.kind(func.value).is_tensor else None  # a user's class may have `equal` too
