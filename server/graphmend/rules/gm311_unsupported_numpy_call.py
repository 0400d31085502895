from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import NUMPY_UNSUPPORTED
from .base import Rule, RuleDocs


class UnsupportedNumpyCall(Rule):
    """A NumPy function `torch._numpy` does not implement, in compiled code."""

    docs = RuleDocs(
        what=(
            "flags, in compiled code, calls of NumPy functions that `torch._numpy` does not "
            "implement: `np.random.permutation`, `np.interp`, `np.isin`, `np.delete`, `np.load`... (the "
            "table `NUMPY_UNSUPPORTED`, read from Dynamo's own NumPy-to-torch map)."
        ),
        why=(
            "Dynamo traces NumPy in compiled code by running `torch._numpy` instead; "
            'a function with no counterpart there cannot be traced: "attempted to trace numpy function '
            "unsupported by PyTorch\" (gb0294), measured on torch 2.13.0 (BigBird's random block plan in "
            "training draws with `np.random.permutation`)."
        ),
        example="perm_block = np.random.permutation(to_block_list)",
        action="Compute it with a torch op, or outside the compiled region.",
        fix=(
            "no automatic fix: a torch counterpart (`torch.randperm`) draws from another "
            "random stream, so the values change. Use torch where it is equivalent for you, or compute the "
            "value outside the compiled region and pass it in."
        ),
    )

    code = "GM311"
    name = "unsupported-numpy-call"
    message = "Dynamo cannot trace this NumPy function; compute it with torch or outside the compiled region"
    severity = Severity.INFORMATION
    reason = "attempted to trace numpy function unsupported by PyTorch"
    reason_id = "gb0294"
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if analysis.qualified_name(node.func) in NUMPY_UNSUPPORTED else None
