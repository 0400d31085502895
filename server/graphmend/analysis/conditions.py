"""Conditions as tensor logic: the Python part of a test stays Python, the tensor part is a bool tensor.

    if h.dtype == torch.float16 and (torch.isinf(h).any() or torch.isnan(h).any()):
                 ↓                                  ↓
    static prefix (a Python `if`)      torch.isinf(h).any() | torch.isnan(h).any()

Python evaluates `and`/`or` lazily, and the lazy part often guards the rest
(`mask is not None and (mask == 0).any()`). The translation keeps every such guard: leading Python
operands become a Python `if` around the rewrite, and a Python operand between tensor operands
becomes a conditional expression (`(t2 if ready else False)`), so a tensor operand is evaluated
exactly where Python would have evaluated it. Only the tensor operands, which Dynamo cannot decide
while tracing, are evaluated eagerly, with `&`, `|`, `~` (bool tensors) or `!= 0` (truthiness of a
number tensor).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..regions import UNKNOWN_VALUE
from ..semantics import walk
from .hazards import hazards
from .purity import evaluated_always, impurity

Segment = Callable[[ast.AST], str]  # the source text of a node


class ConditionError(Exception):
    """The condition cannot be written as tensor logic; the message says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Split:
    """A test as `static and rest`: `static` (may be empty) stays a Python condition, `rest` is
    data-dependent and becomes a bool tensor."""

    static: tuple[ast.expr, ...]
    rest: ast.expr
    # Python operands moved before a tensor operand they followed: Python skipped them where that
    # operand was false, and now evaluates them first (issue 67, review 8: `n > 1` with `n=None`)
    reordered: tuple[ast.expr, ...] = ()


@dataclass(frozen=True)
class _Text:
    text: str
    is_tensor: bool  # always a tensor (False: may be a Python bool on some path)
    atomic: bool = False  # needs no parentheses as an operand of `&`, `|`, `~`


def condition_refusal(test: ast.expr, analysis: FunctionAnalysis, flags: bool = True) -> str | None:
    """Why a rewrite into torch operations cannot take this condition: a NumPy value (Dynamo traces
    NumPy as tensors, but `torch.where`/`torch._assert_async` would make the values tensors in
    eager too), a membership test of a tensor in a Python sequence (a Python bool, no tensor), or
    (`flags`) a value that is a Python bool on some paths (a torch selection needs a tensor on all)."""
    for node in walk(test):
        if flags and isinstance(node, ast.expr) and analysis.kind(node) is Kind.TENSOR_ON_SOME_PATHS:
            return (
                f"`{ast.unparse(node)}` is a Python value on some paths and a tensor on others; make it a "
                "tensor on every path (e.g. `torch.tensor(False)` for the Python default) to select with torch"
            )
        if isinstance(node, ast.expr) and analysis.kind(node) is Kind.NUMPY:
            return (
                "the condition tests a NumPy value (Dynamo traces it as a tensor); a torch rewrite would turn "
                "NumPy values into tensors: compute it with torch, or before the compiled region"
            )
        if (
            isinstance(node, ast.Compare)
            and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
            and analysis.kind(node) is not Kind.PYTHON
        ):
            return (
                "the condition tests a tensor's membership in a Python sequence, a Python bool: compare with "
                "`torch.isin(x, torch.tensor([...]))` to keep it a tensor"
            )
    always = evaluated_always(test)
    for hazard in hazards(test, analysis):
        if hazard.raises is not None and id(hazard.node) not in always:
            # tensor logic evaluates every operand: `x.sum() > 0 or x.max() > 1` would take the max of an empty x
            why = hazard.raises.split(", which ", 1)[-1]
            return f"the condition would evaluate {hazard.operation} where `and`/`or` skipped it, which {why}"
    return None


def is_tensor_operand(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """An operand whose truth Python cannot know while tracing: a tensor value."""
    return analysis.is_data_dependent(expr)


def split(test: ast.expr, analysis: FunctionAnalysis) -> Split:
    """The Python operands of a top-level `and`, and the rest: the leading ones, and those after a
    tensor operand too when every tensor operand may be evaluated in any order (pure, raising
    nothing: `t.min() >= 0 and flag` is `flag and t.min() >= 0`). A flag that was false then still
    keeps the tensor code from running, as it did (timesfm's `torch.maximum(t, 0.0)`, which raises,
    behind a default-false `truncate_negative`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        values = test.values
        count = 0
        while count < len(values) - 1 and _is_python_operand(values[count], analysis):
            count += 1
        static = list(values[:count])
        rest = list(values[count:])
        later = [v for v in rest if _is_python_operand(v, analysis)]
        if later and len(later) < len(rest) and all(_reorderable(v, analysis) for v in rest if v not in later):
            static += later
            rest = [v for v in rest if v not in later]
        if static:
            remainder = rest[0] if len(rest) == 1 else ast.BoolOp(op=ast.And(), values=rest)
            if len(rest) > 1:
                ast.copy_location(remainder, rest[0])
            reordered = tuple(v for v in static if v not in values[:count])
            return Split(tuple(static), remainder, reordered)
    return Split((), test)


def _reorderable(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """Evaluating `expr` earlier, later or not at all changes nothing: no call that is not a known
    pure one, no assignment expression, no operation that may raise."""
    if any(isinstance(node, ast.NamedExpr) for node in walk(expr)):
        return False
    if impurity(expr, analysis, set(), condition=True) is not None:
        return False
    return not any(hazard.raises is not None for hazard in hazards(expr, analysis))


def _is_python_operand(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """Decided by Python, lazily, as written: not a tensor, and not a comparison that may be one."""
    if is_tensor_operand(expr, analysis):
        return False
    return not (isinstance(expr, ast.Compare) and analysis.kind(expr) is not Kind.PYTHON)


def tensor_logic(test: ast.expr, analysis: FunctionAnalysis, segment: Segment, torch_name: str) -> str:
    """`test` as an expression that is a bool tensor on every path, keeping Python's laziness."""
    result = _Translator(analysis, segment, torch_name).translate(test, negate=False)
    if not result.is_tensor:
        raise ConditionError("the condition may be decided by a Python value alone on some path")
    return result.text


class _Translator:
    def __init__(self, analysis: FunctionAnalysis, segment: Segment, torch_name: str) -> None:
        self.analysis = analysis
        self.segment = segment
        self.torch = torch_name

    def translate(self, expr: ast.expr, negate: bool) -> _Text:
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self.translate(expr.operand, not negate)
        if isinstance(expr, ast.BoolOp):
            # De Morgan: `not (a and b)` is `not a or not b`.
            conjunction = isinstance(expr.op, ast.And) != negate
            return self._lazy(expr.values, conjunction, negate)
        return self._atom(expr, negate)

    def _lazy(self, values: list[ast.expr], conjunction: bool, negate: bool) -> _Text:
        """`v1 and v2 and ...` (or `or`): tensor operands are combined eagerly; a Python operand
        decides in Python whether the operands after it are evaluated at all."""
        operator = "&" if conjunction else "|"
        parts: list[_Text] = []
        for position, value in enumerate(values):
            if _is_python_operand(value, self.analysis) and position < len(values) - 1:
                rest = self._lazy(values[position + 1 :], conjunction, negate)
                decided = "False" if conjunction else "True"
                guard = self._python_truth(value, negate)
                # `rest if guard else decided` for and, `decided if guard else rest` for or.
                if conjunction:
                    text = f"({rest.text} if {guard} else {decided})"
                else:
                    text = f"({decided} if {guard} else {rest.text})"
                parts.append(_Text(text, False, atomic=True))
                break
            parts.append(self.translate(value, negate))
        if len(parts) == 1:
            return parts[0]
        texts = [p.text if p.atomic else f"({p.text})" for p in parts]
        return _Text(f" {operator} ".join(texts), any(p.is_tensor for p in parts))

    def _python_truth(self, expr: ast.expr, negate: bool) -> str:
        """A Python operand's truth as Python computes it (the same laziness, the same result)."""
        text = python_text(expr, self.segment)
        if isinstance(expr, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text:
            text = f"({text})"
        return f"not {text}" if negate else text

    def _atom(self, expr: ast.expr, negate: bool) -> _Text:
        text = python_text(expr, self.segment)
        simple = isinstance(expr, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))
        kind = self.analysis.kind(expr)
        if kind is Kind.BOOL_TENSOR:
            if negate:
                return _Text(f"~{text}" if simple else f"~({text})", True, atomic=True)
            return _Text(text, True, atomic=simple)
        if is_tensor_operand(expr, self.analysis):  # the truth of a number tensor is "not zero"
            operand = text if simple else f"({text})"
            return _Text(f"{operand} {'==' if negate else '!='} 0", True)
        if isinstance(expr, ast.Compare) and kind is not Kind.PYTHON:
            # A Python bool or a bool tensor, depending on values graphmend cannot see: `&`/`|`
            # are right for both; a negation is left to Python.
            if negate:
                return _Text(f"(False if {text} else True)", False, atomic=True)
            return _Text(text, False, atomic=False)
        if negate or _is_bool_valued(expr, self.analysis):
            return _Text(self._python_truth(expr, negate), False, atomic=not negate and simple)
        # `t & 2` is bitwise; Python's `t and 2` asks for the truth of 2.
        if self.analysis.is_builtin("bool"):
            return _Text(f"bool({text})", False, atomic=True)
        return _Text(f"(True if {text} else False)", False, atomic=True)


def _is_bool_valued(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    if isinstance(expr, ast.Compare):
        return True
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, bool)
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id in ("isinstance", "issubclass", "hasattr", "callable", "bool")
        and analysis.is_builtin(expr.func.id)
    )


def negated(expr: ast.expr) -> ast.expr:
    """`not expr` with the negation pushed inward (De Morgan), so that its Python part can be split
    off: `not (not training or p > limit)` → `training and not p > limit`."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return expr.operand
    if isinstance(expr, ast.BoolOp):
        op: ast.boolop = ast.Or() if isinstance(expr.op, ast.And) else ast.And()
        return ast.copy_location(ast.BoolOp(op=op, values=[negated(v) for v in expr.values]), expr)
    return ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=expr), expr)


def static_text(operands: tuple[ast.expr, ...], segment: Segment) -> str:
    """The Python operands of a condition, joined with `and` as they were written."""
    texts = []
    for operand in operands:
        text = python_text(operand, segment)
        wrap = isinstance(operand, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text
        texts.append(f"({text})" if wrap else text)
    return " and ".join(texts)


def python_text(expr: ast.expr, segment: Segment) -> str:
    """Source text of `expr`; `not`/`and`/`or` made by `negated` are written out from their parts."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = expr.operand
        text = python_text(inner, segment)
        wrap = isinstance(inner, (ast.BoolOp, ast.IfExp, ast.Compare, ast.Lambda, ast.NamedExpr)) or "\n" in text
        return f"not ({text})" if wrap else f"not {text}"
    if isinstance(expr, ast.BoolOp):
        joiner = " and " if isinstance(expr.op, ast.And) else " or "
        parts = []
        for value in expr.values:
            text = python_text(value, segment)
            wrap = isinstance(value, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text
            parts.append(f"({text})" if wrap else text)
        return joiner.join(parts)
    return segment(expr)


def annotation_claims(test: ast.expr, analysis: FunctionAnalysis) -> dict[str, str]:
    """The names of `test` that are tensors only because a parameter's annotation says so (nothing
    in the function uses the parameter as a tensor), when every tensor name of `test` is one: at
    run time the condition may be a Python value, and `torch.where` would raise on it (kornia 0.9.0
    `augmentation/utils/helpers.py:198`: `B = reference_shape[-4]`, a `torch.Size` passed where the
    annotation says `torch.Tensor`). Name → the parameter and its annotation, in words."""
    tensor_names = _tensor_names(test, analysis)
    if tensor_names is None:
        return {}
    claims = {name: _annotation_claim(name, analysis, set()) for name in tensor_names}
    if not claims or None in claims.values():
        return {}
    return {name: why for name, why in claims.items() if why is not None}


def python_value_claim(test: ast.expr, analysis: FunctionAnalysis) -> str | None:
    """Why `test` may be a Python value at run time though graphmend takes it for a tensor, or None:
    a name that makes part of it a tensor with no call in between (`C` in `x.shape[1] != C`, not
    `x` in `(x < 0).any()`, where a Python value would fail as it is) is a tensor only by a
    parameter's annotation (or made from one, `C = reference_shape[-3]`), or only for the callers
    that pass one (`caller_typed`). Unlike `annotation_claims`, one such name is enough: with a
    Python number there, a comparison is a Python bool, `~` of it an int, and `torch._assert_async`
    of either raises TypeError (kornia 0.8.1 `_transform_input_by_shape`)."""
    for name in sorted(_bare_tensor_names(test, analysis)):
        if name in analysis.caller_typed:
            annotation = analysis.caller_typed[name] or "nothing"
            return f"`{name}` is a tensor only for some callers (its annotation says `{annotation}`)"
        claim = _annotation_claim(name, analysis, set())
        if claim is not None:
            return claim
    return None


def _bare_tensor_names(expr: ast.expr, analysis: FunctionAnalysis) -> set[str]:
    """The names whose tensors make parts of `expr` tensors by operators, subscripts and attributes
    alone: not through a call (a method or function that takes only a tensor)."""
    if isinstance(expr, ast.Name):
        return {expr.id} if analysis.kind(expr).is_tensor else set()
    if isinstance(expr, (ast.Call, ast.Lambda)) or (
        isinstance(expr, (ast.Attribute, ast.Subscript)) and not analysis.kind(expr).is_tensor
    ):
        return set()  # `x.shape[-3]`: a Python value
    return {
        name
        for child in ast.iter_child_nodes(expr)
        if isinstance(child, ast.expr)
        for name in _bare_tensor_names(child, analysis)
    }


def _tensor_names(expr: ast.expr, analysis: FunctionAnalysis) -> set[str] | None:
    """The names whose tensors make `expr` a tensor (`B` in `B == x.shape[0]`), or None when a call
    in it makes one."""
    kind = analysis.kind(expr)
    if isinstance(expr, ast.Name):
        return {expr.id} if kind.is_tensor else set()
    if isinstance(expr, ast.Call) and kind.is_tensor:
        return None
    if not kind.is_tensor and not isinstance(expr, (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.BinOp)):
        return set()  # `x.shape[-3]`: a Python value
    names: set[str] = set()
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.expr):
            found = _tensor_names(child, analysis)
            if found is None:
                return None
            names |= found
    return names


def _annotation_claim(name: str, analysis: FunctionAnalysis, seen: set[str]) -> str | None:
    """Why `name` is a tensor only by an annotation (the parameter it comes from), else None."""
    if name in analysis.annotation_typed:
        return f"`{name}` is a tensor only by its annotation `{analysis.annotation_typed[name]}`"
    if analysis.function is None or name in seen or name in analysis.function.parameter_names:
        return None
    seen.add(name)
    reasons: list[str] = []
    for value in analysis.module.regions.assigned_values(analysis.function).get(name, []):
        if value is UNKNOWN_VALUE:
            continue  # bound by unpacking, `for` or `with`: says nothing of a tensor
        sources = _tensor_names(value, analysis)
        if sources is None:
            return None
        for source in sources:
            why = _annotation_claim(source, analysis, seen)
            if why is None:
                return None
            reasons.append(why)
    return reasons[0] if reasons else None
