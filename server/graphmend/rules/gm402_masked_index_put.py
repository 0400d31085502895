from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import where_for_masked_write
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..torch_api import REDUCTION_METHODS
from .base import Rule


class MaskedIndexPut(Rule):
    """What it does: flags a write of many values through a boolean mask, `x[mask] = y[mask]`
    or `x[mask] = t` with a tensor `t`, in code compiled for CUDA graphs.

    Why it keeps the graph out of CUDA graphs: inductor lowers such an `index_put_` to a fallback
    kernel that calls `.nonzero()` while the graph is captured, and marks the graph unsafe
    ("index_put_ fallback with boolean indexing is not compatible with CUDA graphs",
    `index_put_fallback` in `torch/_inductor/lowering.py`). One value is different:
    `x[mask] = 0.0` (or a 0-d tensor) is lowered to a masked fill (`index_put_impl_` dispatches a
    single boolean index with a single value to `index_put_as_masked_fill`), so it is not flagged.

    Example:
        keep = scores > threshold
        out = torch.zeros_like(scores)
        out[keep] = scores[keep]

    Fix and its safety: `out = torch.where(keep, scores, out)` (the mask gets trailing dimensions
    of size one when it is not an element-wise test of either tensor and may cover only the
    leading ones of `out`), which is bit-identical (the write requires equal dtypes, so `where`
    promotes nothing) and also removes the read `scores[keep]`, a dynamic-shape graph break (GM302).
    Unsafe: a new tensor is bound to the name where the original changed the old one in place, so
    it is offered only for a local name that is not a parameter and is not handed on whole
    (assigned to another name, stored, passed); other value forms are refused.
    """

    code = "GM402"
    name = "masked-index-put"
    message = ("Select with `torch.where` instead: a write of many values through a boolean mask falls back to a "
               "kernel that calls `.nonzero()`, which keeps the graph out of CUDA graphs")
    reason = "index_put_ fallback with boolean indexing is not compatible with CUDA graphs"
    reason_id = None
    cuda_graphs = True
    node_types = (ast.Assign,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Assign)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
            return None
        target = node.targets[0]
        if analysis.kind(target.slice).present is not Kind.BOOL_TENSOR or not analysis.kind(target.value).is_tensor:
            return None
        if not analysis.kind(node.value).is_tensor or _one_element(node.value, analysis):
            return None
        return node

    def fix(self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
        assert isinstance(node, ast.Assign)
        return where_for_masked_write(node, analysis, ctx)


def _one_element(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A value known to hold one element: a full reduction (`t.sum()`, `t.max()`), `t.item()`-like
    0-d results, `torch.tensor(<number>)`."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in REDUCTION_METHODS and not value.args and not value.keywords:
        return True
    qualname = analysis.qualified_name(func)
    return qualname == "torch.tensor" and len(value.args) == 1 and isinstance(value.args[0], (ast.Constant, ast.UnaryOp))
