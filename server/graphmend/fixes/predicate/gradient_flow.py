"""Whether a value carries no gradient: what a path selected beside one that does gives away.

`torch.where` passes the gradient of the value it did not select as zeros: where one path's value
has no autograd history (a constant, a comparison, `zeros_like`, `torch.where(h > 0, 1.0, 0.0)`)
and another's has, the merged value requires grad where the original's did not, and what the other
path read gets a zero gradient instead of none (or a backward that raised now runs). A value is
taken as gradient-free by construction: made of numbers, comparisons, operations torch's run shows
never give a result that requires grad (`known_ops.NO_GRADIENT`), and allowlisted operations of
such values only.
"""

from __future__ import annotations

import ast

from ...analysis import known_ops
from ...analysis.purity import assigned_once
from ...inference import FunctionAnalysis
from ...kinds import Kind
from ...semantics import ancestors, walk
from ...torch_api import FACTORY_FUNCTIONS
from .arms import is_number
from .surroundings import GRAD_MODES

# Casts that keep a value's lack of gradient (a comparison's bool made a float still has none), and
# what keeps it too (`h.detach().clone()`, `h.data.view(-1)`).
_CASTS = frozenset(
    "float double half bfloat16 int long bool to type type_as clone contiguous view reshape flatten".split()
)
# Methods whose result has no autograd history whatever they are called on.
_FRESH_METHODS = frozenset("detach new_zeros new_ones new_full new_empty new_tensor zeros_like ones_like".split())


def gradient_free(value: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """`value` has no autograd history, whatever the tensors it reads require."""
    if is_number(value) or isinstance(value, ast.Compare):
        return True
    if isinstance(value, ast.Attribute) and value.attr == "data":  # `h.data`: no history
        return True
    if isinstance(value, ast.Name) and value.id not in seen:
        if _assigned_without_grad(value.id, analysis):
            return True
        assigned = assigned_once(value.id, analysis)
        return assigned is not None and gradient_free(assigned, analysis, seen | {value.id})
    if isinstance(value, ast.BinOp):
        return gradient_free(value.left, analysis, seen) and gradient_free(value.right, analysis, seen)
    if isinstance(value, ast.UnaryOp):
        return gradient_free(value.operand, analysis, seen)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _FRESH_METHODS:
        return True
    own = _own_method_returns(value, analysis)
    if own:  # `self.stop(h)` whose every `return` gives `h.detach()` (review 8)
        return all(r is not None and gradient_free(r, analysis, seen) for r in own)
    qualname = analysis.qualified_name(func)
    if qualname is None and isinstance(func, ast.Attribute) and known_ops.METHOD + func.attr in known_ops.NO_GRADIENT:
        return True  # `h.long()`: an integer result has no gradient, whatever a later cast makes of it (review 13)
    if isinstance(func, ast.Attribute) and func.attr in _CASTS:
        return gradient_free(func.value, analysis, seen)
    name = (
        qualname
        if qualname is not None
        else (known_ops.METHOD + func.attr if isinstance(func, ast.Attribute) else None)
    )
    if name is None:
        return False
    name = name.replace("torch.Tensor.", known_ops.METHOD, 1)
    last = name.rsplit(".", 1)[-1]
    if name in known_ops.NO_GRADIENT or (
        name.startswith("torch.") and (last in FACTORY_FUNCTIONS or last.endswith("_like"))
    ):
        return True
    if known_ops.known(name) is None:
        return False
    operands = [*value.args, *(k.value for k in value.keywords)]
    if qualname is None and isinstance(func, ast.Attribute):
        operands.append(func.value)  # a method's tensor
    return all(
        gradient_free(operand, analysis, seen)
        for operand in operands
        if (analysis.kind(operand).is_tensor or analysis.kind(operand) is Kind.UNKNOWN) and not _option(operand)
    )


def _assigned_without_grad(name: str, analysis: FunctionAnalysis) -> bool:
    """Every assignment of `name` is inside `with torch.no_grad():` (or `inference_mode()`,
    `set_grad_enabled(False)`): its value has no gradient (review 13)."""
    function = analysis.function
    if function is None:
        return False
    assignments = [
        node
        for node in walk(function.node)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return bool(assignments) and all(_in_grad_free_block(node, analysis) for node in assignments)


def _in_grad_free_block(node: ast.AST, analysis: FunctionAnalysis) -> bool:
    assert analysis.function is not None
    for holder in ancestors(node, analysis.function.node)[1:]:
        if not isinstance(holder, ast.With):
            continue
        for item in holder.items:
            call = item.context_expr
            mode = analysis.qualified_name(call.func) if isinstance(call, ast.Call) else None
            if not isinstance(call, ast.Call) or mode not in GRAD_MODES or mode.endswith(".enable_grad"):
                continue
            if not mode.endswith(".set_grad_enabled") or (
                call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False
            ):
                return True
    return False


def _option(expr: ast.expr) -> bool:
    """A dtype, a string, None: an option of the call, not a value it computes with."""
    if isinstance(expr, ast.Constant):
        return True
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "torch"


def _own_method_returns(call: ast.Call, analysis: FunctionAnalysis) -> list[ast.expr | None]:
    """What each `return` of the method of this module's class `call` calls gives (empty: not one)."""
    func = call.func
    owner = analysis.owner
    if not (isinstance(func, ast.Attribute) and analysis.is_self(func.value) and owner is not None):
        return []
    method = owner.find_method(func.attr)
    if method is None:
        return []
    return [node.value for node in walk(method.node) if isinstance(node, ast.Return)]
