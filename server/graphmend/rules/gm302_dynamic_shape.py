from __future__ import annotations

import ast

from ..diagnostics import Fix, Severity
from ..fixes.base import FixContext, Refusal
from ..fixes.capture import scope_capture
from ..fixes.cudagraphs import where_for_masked_write
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import walk
from ..torch_api import DYNAMIC_SHAPE_FUNCTIONS, DYNAMIC_SHAPE_METHODS
from .base import Rule, RuleDocs

CAPTURE = "capture_dynamic_output_shape_ops"


class DynamicShapeOperator(Rule):
    """An operator whose output shape depends on tensor data."""

    docs = RuleDocs(
        what=(
            "flags operators whose output shape depends on tensor data: `torch.nonzero`, "
            "`torch.argwhere`, `torch.unique`, `torch.masked_select`, one-argument `torch.where(cond)`, their "
            "method forms, `repeat_interleave` with tensor repeats (and no `output_size=`), and boolean-mask "
            "indexing `x[x > 0]`, also through a named mask (a read, also the one in `x[mask] += v`; "
            "`x[mask] = v` is fine)."
        ),
        why=(
            "without `capture_dynamic_output_shape_ops`, Dynamo cannot give the "
            'result a size while tracing ("Dynamic shape operator").'
        ),
        example="positive = x[x > 0]",
        action="Keep shapes static: select with `torch.where` rather than index with a mask.",
        fix=(
            "a copy through one mask, `out[m] = y[m]`, becomes `out = torch.where(m, y, "
            "out)` (see GM402: unsafe, the name is bound to a new tensor; only for a local `out` nothing else "
            "holds). Otherwise no rewrite of the expression keeps the result's shape (keep shapes static: "
            "`torch.where(mask, x, 0)`, a masked reduction). Where the result's size feeds no Python branch, "
            "the unsafe fix turns on `torch._dynamo.config.capture_dynamic_output_shape_ops` for the compiled "
            "entry only (wrapping its `torch.compile`), so Dynamo traces the size symbolically."
        ),
    )

    code = "GM302"
    name = "dynamic-shape-operator"
    message = "The result's size depends on tensor data; keep shapes static (e.g. `torch.where`)"
    severity = Severity.INFORMATION
    reason = "Dynamic shape operator"
    reason_id = "gb0036"
    fixable = False
    node_types = (ast.Call, ast.Subscript, ast.AugAssign)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if CAPTURE in analysis.captures:
            return None  # traced with a symbolic size
        return self._dynamic_shape(node, analysis)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        if analysis.entry is None:
            return None
        copied = _copied_through_mask(node, analysis)
        if copied is not None:  # `x[m] = y[m]`: a select keeps the shape, no setting needed
            selected = where_for_masked_write(copied, analysis, ctx)
            if isinstance(selected, Fix):
                return selected
        others = (
            [
                n
                for n in walk(analysis.function.node)
                if isinstance(n, self.node_types) and self._dynamic_shape(n, analysis) is not None
            ]
            if analysis.function
            else []
        )
        return scope_capture(node, CAPTURE, analysis.entry, analysis, ctx, others)

    def _dynamic_shape(self, node: ast.AST, analysis: FunctionAnalysis) -> ast.AST | None:
        if isinstance(node, ast.AugAssign):  # `x[mask] += v` reads `x[mask]` first (measured: a break)
            return self._mask_read(node.target, analysis) if isinstance(node.target, ast.Subscript) else None
        if isinstance(node, ast.Subscript):
            return self._mask_read(node, analysis) if isinstance(node.ctx, ast.Load) else None
        assert isinstance(node, ast.Call)
        qualname = analysis.qualified_name(node.func)
        if qualname in DYNAMIC_SHAPE_FUNCTIONS:
            return node
        if qualname == "torch.where" and len(node.args) == 1 and not node.keywords:
            return node
        func = node.func
        if qualname is None and isinstance(func, ast.Attribute) and func.attr in DYNAMIC_SHAPE_METHODS:
            return node if analysis.kind(func.value).is_tensor else None
        if qualname == "torch.repeat_interleave" or (
            qualname is None
            and isinstance(func, ast.Attribute)
            and func.attr == "repeat_interleave"
            and analysis.kind(func.value).is_tensor
        ):
            return node if _tensor_repeats(node, analysis, position=1 if qualname else 0) else None
        return None

    @staticmethod
    def _mask_read(node: ast.Subscript, analysis: FunctionAnalysis) -> ast.AST | None:
        """Indexing by a bool tensor: the value is a tensor too (unless known to be something else)."""
        value = analysis.kind(node.value)
        if not (value.is_tensor or value is Kind.UNKNOWN):
            return None
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return node if any(analysis.kind(i).present is Kind.BOOL_TENSOR for i in index) else None


def _tensor_repeats(call: ast.Call, analysis: FunctionAnalysis, position: int) -> bool:
    """`repeat_interleave` with tensor `repeats` and no `output_size=`: the output's length is the
    sum of the repeats (measured on torch 2.13: "Dynamic shape operator"); int repeats keep it static."""
    if any(k.arg == "output_size" for k in call.keywords):
        return False
    repeats = next(
        (k.value for k in call.keywords if k.arg == "repeats"),
        call.args[position] if len(call.args) > position else None,
    )
    return repeats is not None and analysis.kind(repeats).is_tensor


def _copied_through_mask(node: ast.AST, analysis: FunctionAnalysis) -> ast.Assign | None:
    """The write `x[...] = node` whose value is the read `node` (`where_for_masked_write` decides
    whether it is a copy through one mask)."""
    if not isinstance(node, ast.Subscript) or analysis.function is None:
        return None
    return next(
        (
            stmt
            for stmt in walk(analysis.function.node)
            if isinstance(stmt, ast.Assign)
            and stmt.value is node
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Subscript)
        ),
        None,
    )
