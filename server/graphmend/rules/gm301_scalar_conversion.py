from __future__ import annotations

import ast

from ..diagnostics import Fix, Severity
from ..fixes.base import FixContext, Refusal
from ..fixes.capture import scope_capture
from ..inference import FunctionAnalysis
from ..semantics import walk
from ..torch_api import SCALAR_BUILTINS, SCALAR_METHODS
from .base import Rule

CAPTURE = "capture_scalar_outputs"


def _converts_tensor(node: ast.Call, analysis: FunctionAnalysis) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in SCALAR_METHODS and not node.args:
        return analysis.kind(func.value).is_tensor
    return (
        isinstance(func, ast.Name)
        and func.id in SCALAR_BUILTINS
        and len(node.args) == 1
        and analysis.is_builtin(func.id)
        and analysis.kind(node.args[0]).is_tensor
    )


def _capturable(node: ast.Call) -> bool:
    """What `capture_scalar_outputs` traces: `.item()`, `int(t)`, `float(t)` (measured: `.tolist()`
    of a float tensor still breaks; `bool(t)` is a branch on the value)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "item"
    return isinstance(func, ast.Name) and func.id in ("int", "float")


class ScalarConversion(Rule):
    """What it does: flags `.item()`, `.tolist()`, and `int(t)`/`float(t)`/`bool(t)` on tensors in
    compiled code.

    Why it breaks the graph: these turn tensor data into Python values, which a traced graph cannot
    produce with `capture_scalar_outputs=False` (the default). Dynamo's hint: "Unsupported
    Tensor.item() call with capture_scalar_outputs=False".

    Example:
        if x[0].item() > 0:
            ...

    Fix and its safety: no rewrite of the expression keeps behaviour in general (keep the value a
    tensor: compare tensors, use `torch.where`). For `.item()`, `int(t)` and `float(t)` whose value
    feeds no Python branch, the unsafe fix turns on `torch._dynamo.config.capture_scalar_outputs`
    for the compiled entry only (wrapping its `torch.compile`), so Dynamo traces the value
    symbolically; not offered where there is no `torch.compile` in the file to wrap.
    """

    code = "GM301"
    name = "tensor-to-python-scalar"
    message = "Unsupported Tensor.item() call with capture_scalar_outputs=False: keep the value a tensor"
    severity = Severity.INFORMATION
    reason = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    reason_id = "gb0124"
    also_reported_as = ("gb0033",)
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        if not _converts_tensor(node, analysis):
            return None
        if _capturable(node) and CAPTURE in analysis.captures:
            return None  # traced as a symbolic value
        return node

    def fix(self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        if not _capturable(node) or analysis.entry is None:
            return None
        others = [n for n in walk(analysis.function.node) if isinstance(n, ast.Call) and _capturable(n)
                  and _converts_tensor(n, analysis)] if analysis.function else []
        return scope_capture(node, CAPTURE, analysis.entry, analysis, ctx, others)

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: `.tolist()` is reported as "Data dependent operator" (gb0033).
        if isinstance(reported, ast.Call) and isinstance(reported.func, ast.Attribute) and reported.func.attr == "tolist":
            return "gb0033"
        return self.reason_id
