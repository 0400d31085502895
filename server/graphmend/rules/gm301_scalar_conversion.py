from __future__ import annotations

import ast

from ..diagnostics import Fix, Severity
from ..fixes.base import FixContext, Refusal
from ..fixes.capture import scope_capture
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import walk
from ..torch_api import SCALAR_BUILTINS, SCALAR_METHODS, breaks_on
from .base import Rule, RuleDocs

CAPTURE = "capture_scalar_outputs"
NUMPY_MESSAGE = "NumPy runs as tensors here, so a NumPy value made a Python number breaks the graph; use torch"


def _converts_tensor(node: ast.Call, analysis: FunctionAnalysis) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in SCALAR_METHODS and not node.args:
        return analysis.kind(func.value).is_tensor
    return _builtin_conversion(node, analysis) and analysis.kind(node.args[0]).is_tensor


def _builtin_conversion(node: ast.Call, analysis: FunctionAnalysis) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Name)
        and func.id in SCALAR_BUILTINS
        and len(node.args) == 1
        and analysis.is_builtin(func.id)
    )


def _converts_numpy(node: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`int(np.sum(counts))`: NumPy is traced as tensors, so this reads tensor data (measured on
    torch 2.13: "Data dependent operator", or "torch.* op returned non-Tensor" for a slice of a
    Python list, as in BigBird's random block plan). A NumPy function of Python numbers only
    (`int(np.ceil(n / 3))`) is folded and traces. `.item()` on NumPy is GM308's."""
    return _builtin_conversion(node, analysis) and _numpy_data(node.args[0], analysis, 0)


def _numpy_data(expr: ast.expr, analysis: FunctionAnalysis, depth: int) -> bool:
    """A NumPy value built from a sequence or an array, not from Python numbers only."""
    if depth > 4 or analysis.kind(expr) is not Kind.NUMPY:
        return False
    if isinstance(expr, ast.Name) and analysis.function is not None:
        values = analysis.module.regions.assigned_values(analysis.function).get(expr.id, [])
        return bool(values) and all(_numpy_data(v, analysis, depth + 1) for v in values)
    if isinstance(expr, ast.Call):
        return any(_sequence(a, analysis) for a in [*expr.args, *(k.value for k in expr.keywords)])
    return True


def _sequence(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A list, tuple, slice or array: what NumPy turns into a tensor in the graph. Numbers and
    what graphmend cannot tell are not (precision over recall)."""
    if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice):
        return True
    return analysis.kind(expr) in (Kind.NUMPY, Kind.CONTAINER)


def _numpy_reason(node: ast.Call) -> str:
    argument = node.args[0]
    sliced = isinstance(argument, ast.Call) and any(
        isinstance(a, ast.Subscript) and isinstance(a.slice, ast.Slice) for a in argument.args
    )
    return "gb0208" if sliced else "gb0033"


def _indexes_sequence_by_tensor(node: ast.Subscript, analysis: FunctionAnalysis) -> bool:
    """`fns[idx]` where `fns` is a list or tuple the function builds and `idx` a tensor: indexing a
    Python sequence calls the tensor's `__index__`, which reads its value (measured on torch 2.13:
    "Unsupported Tensor.item() call"; with `capture_scalar_outputs` a data-dependent guard error)."""
    sequence = node.value
    if (
        not isinstance(sequence, ast.Name)
        or analysis.function is None
        or isinstance(node.slice, (ast.Slice, ast.Tuple))
    ):
        return False
    values = analysis.module.regions.assigned_values(analysis.function).get(sequence.id, [])
    return (
        bool(values)
        and all(isinstance(v, (ast.List, ast.Tuple, ast.ListComp)) for v in values)
        and analysis.kind(node.slice).is_tensor
    )


def _is_tolist(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "tolist"


def _capturable(node: ast.Call) -> bool:
    """What `capture_scalar_outputs` traces: `.item()`, `int(t)`, `float(t)` (measured: `.tolist()`
    of a float tensor still breaks; `bool(t)` is a branch on the value)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "item"
    return isinstance(func, ast.Name) and func.id in ("int", "float")


class ScalarConversion(Rule):
    """Tensor data turned into a Python value (`.item()`, `.tolist()`, `int(t)`...) in compiled code."""

    docs = RuleDocs(
        what=(
            "flags `.item()`, `.tolist()`, and `int(t)`/`float(t)`/`bool(t)` on tensors in "
            "compiled code, `int(...)`/`float(...)` of NumPy values (traced as tensors), and a list or tuple "
            "the function builds indexed by a tensor (`transforms[idx]`, which calls the tensor's `__index__`)."
        ),
        why=(
            "these turn tensor data into Python values, which a traced graph cannot "
            "produce with `capture_scalar_outputs=False` (the default). Dynamo's hint: \"Unsupported "
            'Tensor.item() call with capture_scalar_outputs=False". torch 2.9 traces `.tolist()` '
            "(`torch-version`, `BREAKS_SINCE`)."
        ),
        example=("if x[0].item() > 0:\n    ..."),
        action="Keep the value a tensor: compare tensors, and select with `torch.where`.",
        fix=(
            "no rewrite of the expression keeps behaviour in general (keep the value a "
            "tensor: compare tensors, use `torch.where`). For `.item()`, `int(t)` and `float(t)` whose value "
            "feeds no Python branch, the unsafe fix turns on `torch._dynamo.config.capture_scalar_outputs` "
            "for the compiled entry only (wrapping its `torch.compile`), so Dynamo traces the value "
            "symbolically; not offered where there is no `torch.compile` in the file to wrap."
        ),
    )

    code = "GM301"
    name = "tensor-to-python-scalar"
    message = "Reading a tensor's value into Python breaks the graph; keep the value a tensor"
    severity = Severity.INFORMATION
    reason = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    reason_id = "gb0124"
    also_reported_as = ("gb0033", "gb0208")
    fixable = False
    node_types = (ast.Call, ast.Subscript)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if isinstance(node, ast.Subscript):
            return node if _indexes_sequence_by_tensor(node, analysis) else None
        assert isinstance(node, ast.Call)
        if _converts_numpy(node, analysis):
            return node
        if not _converts_tensor(node, analysis):
            return None
        if _is_tolist(node) and not breaks_on("tolist", analysis.module.torch_version):
            return None  # torch 2.9 traces it (unbacked ints)
        if _capturable(node) and CAPTURE in analysis.captures:
            return None  # traced as a symbolic value
        return node

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        if isinstance(node, ast.Subscript):
            return Refusal(
                "a Python sequence indexed by a tensor: keep the index a Python int, or stack the items "
                "into a tensor and index that"
            )
        assert isinstance(node, ast.Call)
        if _converts_numpy(node, analysis):
            return Refusal("a NumPy value: capturing scalar outputs does not trace NumPy; compute it with torch")
        if not _capturable(node) or analysis.entry is None:
            return None
        others = (
            [
                n
                for n in walk(analysis.function.node)
                if isinstance(n, ast.Call) and _capturable(n) and _converts_tensor(n, analysis)
            ]
            if analysis.function
            else []
        )
        return scope_capture(node, CAPTURE, analysis.entry, analysis, ctx, others)

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        if isinstance(reported, ast.Call) and _converts_numpy(reported, analysis):
            return NUMPY_MESSAGE
        return self.message

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: `.tolist()` is reported as "Data dependent operator" (gb0033).
        if isinstance(reported, ast.Call) and _is_tolist(reported):
            return "gb0033"
        if isinstance(reported, ast.Call) and _converts_numpy(reported, analysis):
            return _numpy_reason(reported)
        return self.reason_id
