from __future__ import annotations

import ast

from ..analysis.module_state import assigned_values
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import where_for_masked_write
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..torch_api import REDUCTION_METHODS
from .base import Rule, RuleDocs


class MaskedIndexPut(Rule):
    """A write of many values through a boolean mask, in code compiled for CUDA graphs."""

    docs = RuleDocs(
        what=(
            "flags a write of many values through a boolean mask, `x[mask] = y[mask]`, "
            "`x[mask] = t` with a tensor `t` not known to hold one element, `x[mask] += v` and "
            "`a[mask], b[mask] = f(...)`, in code compiled for CUDA graphs."
        ),
        why=(
            "inductor lowers such an `index_put_` to a fallback "
            "kernel that calls `.nonzero()`, which cannot run while a CUDA graph is captured. Up to torch 2.8 "
            'inductor then records no CUDA graph at all ("index_put_ fallback with boolean indexing is not '
            'compatible with CUDA graphs", `index_put_fallback` in `torch/_inductor/lowering.py`); from torch '
            "2.9 it splits the graph around the kernel (`graph_partition`, on by default), which runs outside "
            "CUDA graphs between replays. One value is different: "
            "`x[mask] = 0.0` (or `torch.tensor(-1e9)`, `t.max()`, a factory of shape `()`) is lowered to a masked fill (`index_put_impl_` dispatches a "
            "single boolean index with a single value to `index_put_as_masked_fill`), so it is not flagged."
        ),
        why_title="Why it keeps work out of CUDA graphs",
        example=("keep = scores > threshold\nout = torch.zeros_like(scores)\nout[keep] = scores[keep]"),
        action="Select with `torch.where(mask, value, out)` instead of the masked write.",
        fix=(
            "`out = torch.where(keep, scores, out)` (the mask gets trailing dimensions "
            "of size one when it is not an element-wise test of either tensor and may cover only the "
            "leading ones of `out`), which is bit-identical (the write requires equal dtypes, so `where` "
            "promotes nothing) and also removes the read `scores[keep]`, a dynamic-shape graph break (GM302). "
            "Unsafe: a new tensor is bound to the name where the original changed the old one in place, so "
            "it is offered only for a local name that is not a parameter and is not handed on whole "
            "(assigned to another name, stored, passed); other value forms are refused."
        ),
    )

    code = "GM402"
    name = "masked-index-put"
    message = (
        "Select with `torch.where` instead: a masked write of many values calls `.nonzero()`, "
        "which runs outside CUDA graphs"
    )
    reason = "index_put_ fallback with boolean indexing is not compatible with CUDA graphs"
    reason_id = None
    cuda_graphs = True
    node_types = (ast.Assign, ast.AugAssign)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if isinstance(node, ast.AugAssign):  # `x[m] += v` writes back `x[m] + v`: as many values as `m` selects
            return node if _masked(node.target, analysis) else None
        assert isinstance(node, ast.Assign)
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):  # `a[m], b[m] = f(...)`: values unpacked from a call
            return (
                node
                if any(_masked(t, analysis) for t in target.elts) and not isinstance(node.value, (ast.Tuple, ast.List))
                else None
            )
        if not _masked(target, analysis):
            return None
        if not analysis.kind(node.value).is_tensor or _one_element(node.value, analysis):
            return None
        return node

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        if not isinstance(node, ast.Assign) or not isinstance(node.targets[0], ast.Subscript):
            return Refusal("only `x[mask] = y[mask]` (the same mask on both sides) can become a `torch.where`")
        return where_for_masked_write(node, analysis, ctx)


def _masked(target: ast.expr, analysis: FunctionAnalysis) -> bool:
    """`target` is `x[m]` with a boolean tensor `m` and a tensor `x`."""
    return (
        isinstance(target, ast.Subscript)
        and analysis.kind(target.slice).present is Kind.BOOL_TENSOR
        and analysis.kind(target.value).is_tensor
    )


def _one_element(value: ast.expr, analysis: FunctionAnalysis, followed: frozenset[str] = frozenset()) -> bool:
    """A value known to hold one element: a full reduction (`t.sum()`, `t.max()`),
    `torch.tensor(<scalar>)`, a factory of shape `()`, or a name bound only to one of those."""
    if isinstance(value, ast.Name) and analysis.function is not None and value.id not in followed:
        values = assigned_values(value.id, analysis)
        return bool(values) and all(_one_element(v, analysis, followed | {value.id}) for v in values)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in REDUCTION_METHODS
        and not value.args
        and not any(k.arg in ("dim", "axis") for k in value.keywords)
    ):
        return True
    qualname = analysis.qualified_name(func)
    first = value.args[0] if value.args else None
    if qualname in ("torch.tensor", "torch.scalar_tensor", "torch.as_tensor"):
        return (
            first is not None
            and not isinstance(first, (ast.List, ast.Tuple, ast.ListComp, ast.Starred))
            and not analysis.kind(first).is_tensor
            and analysis.kind(first) is not Kind.CONTAINER
        )
    if qualname in ("torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn"):
        return isinstance(first, ast.Tuple) and not first.elts  # shape `()`
    return False
