from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import SCALAR_BUILTINS, SCALAR_METHODS
from .base import Rule


class ScalarConversion(Rule):
    """What it does: flags `.item()`, `.tolist()`, and `int(t)`/`float(t)`/`bool(t)` on tensors in
    compiled code.

    Why it breaks the graph: these turn tensor data into Python values, which a traced graph cannot
    produce with `capture_scalar_outputs=False` (the default). Dynamo's hint: "Unsupported
    Tensor.item() call with capture_scalar_outputs=False".

    Example:
        if x[0].item() > 0:
            ...

    Fix and its safety: no source rewrite here keeps behaviour in general. Keep the value a tensor
    (compare tensors, use `torch.where`), or set `torch._dynamo.config.capture_scalar_outputs =
    True` and accept data-dependent symbolic sizes.
    """

    code = "GM301"
    name = "tensor-to-python-scalar"
    message = "Unsupported Tensor.item() call with capture_scalar_outputs=False: keep the value a tensor"
    severity = Severity.INFORMATION
    reason = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    reason_id = "gb0124"
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SCALAR_METHODS and not node.args:
            return node if analysis.kind(func.value).is_tensor else None
        if (
            isinstance(func, ast.Name)
            and func.id in SCALAR_BUILTINS
            and len(node.args) == 1
            and analysis.is_builtin(func.id)
            and analysis.kind(node.args[0]).is_tensor
        ):
            return node
        return None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: `.tolist()` is reported as "Data dependent operator" (gb0033).
        if isinstance(reported, ast.Call) and isinstance(reported.func, ast.Attribute) and reported.func.attr == "tolist":
            return "gb0033"
        return self.reason_id
