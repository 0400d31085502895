"""Can this code run unconditionally? Purity, faulting operations and scalar conditions.

A predicated rewrite evaluates both branches every time. That is exact only when neither branch
changes anything but its own new names, cannot raise where the original would not have run it,
and draws no random numbers (which would shift every later random draw).
"""

from __future__ import annotations

import ast
from typing import Callable

from .. import torch_api as api
from ..inference import FunctionAnalysis, Kind
from ..semantics import attribute_chain

_RANDOM = frozenset(
    """
    rand randn randint randperm rand_like randn_like randint_like bernoulli multinomial normal poisson
    dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout rrelu gumbel_softmax
    """.split()
)
_IMPURE_TENSOR_METHODS = frozenset(
    "item tolist numpy backward register_hook retain_grad record_stream bernoulli multinomial cpu_ share_memory_".split()
)
_PURE_BUILTINS = frozenset({"len", "abs", "min", "max", "isinstance", "hasattr", "round"})
_SCALAR_REDUCTIONS = api.REDUCTION_METHODS


def dotted(expr: ast.expr) -> str | None:
    """`self.n` → "self.n"; None for anything that is not a plain name or attribute chain."""
    chain = attribute_chain(expr)
    return None if chain is None else ".".join([chain[0], *chain[1]])


def names_in(expr: ast.AST) -> set[str]:
    """Every dotted name read in `expr` (`x`, `self.n`, and their prefixes)."""
    found: set[str] = set()
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = dotted(node)  # type: ignore[arg-type]
            if name is not None:
                found.add(name)
    return found


def impurity(expr: ast.AST, analysis: FunctionAnalysis, guarded: set[str], condition: bool = False) -> str | None:
    """Why `expr` cannot be evaluated unconditionally, or None when it can. A `condition` may use
    `and`/`or`/`not` on tensors: the rewrite turns them into tensor logic."""
    for node in ast.walk(expr):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return "a branch has a lambda or comprehension"
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return f"a branch has `{type(node).__name__.lower()}`"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if names_in(node.right) & guarded:
                return "a branch divides by a value the condition tests (it would run unguarded)"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if names_in(node.slice) & guarded:
                return "a branch indexes with a value the condition tests (it would run unguarded)"
        if not condition and isinstance(node, ast.BoolOp) and any(analysis.is_data_dependent(v) for v in node.values[:-1]):
            return "a branch tests a tensor with `and`/`or`"
        if isinstance(node, ast.Call):
            reason = call_impurity(node, analysis)
            if reason is not None:
                return reason
    return None


def call_impurity(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    func = call.func
    qualname = analysis.qualified_name(func)
    if any(k.arg == "inplace" for k in call.keywords):
        return "a branch calls an operation with `inplace=`"
    if qualname is not None:
        name = qualname.rsplit(".", 1)[-1]
        if qualname.startswith("math."):
            return None
        if not qualname.startswith("torch.") or analysis.torch_call_kind(qualname) is Kind.UNKNOWN:
            return f"a branch calls `{qualname}`, which is not known to be pure"
        if name.endswith("_"):
            return f"a branch calls the in-place `{qualname}`"
        if name in _RANDOM:
            return f"a branch draws random numbers (`{qualname}`); running it always would change later draws"
        return None
    if isinstance(func, ast.Name):
        if analysis.is_builtin(func.id) and func.id in _PURE_BUILTINS:
            return None
        return f"a branch calls `{func.id}`, which is not known to be pure"
    if isinstance(func, ast.Attribute):
        receiver = analysis.kind(func.value)
        if receiver.is_tensor:
            if func.attr.endswith("_"):
                return f"a branch changes a tensor in place (`.{func.attr}`)"
            if func.attr in _IMPURE_TENSOR_METHODS or func.attr in _RANDOM:
                return f"a branch calls `.{func.attr}()`"
            return None
        if receiver is Kind.UNKNOWN and func.attr in api.TENSOR_EVIDENCE and func.attr not in _IMPURE_TENSOR_METHODS:
            return None  # a tensor-only method: the receiver is a tensor (as the detection assumed)
        return f"a branch calls `{dotted(func) or '.' + func.attr}`, which is not known to be pure"
    return "a branch calls something that is not known to be pure"


def unguarded_division(expr: ast.AST, guarded: set[str]) -> bool:
    """`x / peak` where the condition tests `peak`: exact values, but when the condition is false
    the division still runs (inf/NaN on the discarded side, NaN gradients through it)."""
    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and bool(names_in(node.right) & guarded)
        for node in ast.walk(expr)
    )


def is_scalar_condition(expr: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """Whether `expr` is provably a one-element tensor or a Python value (so `torch.where` on it
    selects whole values, as the `if` did, instead of silently going elementwise)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Compare, ast.BoolOp)):
        parts = [expr.left, *expr.comparators] if isinstance(expr, ast.Compare) else expr.values
        return all(is_scalar_condition(p, analysis, seen) for p in parts)
    if isinstance(expr, ast.UnaryOp):
        return is_scalar_condition(expr.operand, analysis, seen)
    if isinstance(expr, ast.BinOp):
        return is_scalar_condition(expr.left, analysis, seen) and is_scalar_condition(expr.right, analysis, seen)
    kind = analysis.kind(expr)
    if not kind.is_tensor:
        return kind in (Kind.PYTHON, Kind.NONE)
    if isinstance(expr, ast.Call):
        func = expr.func
        without_dim = not any(k.arg in ("dim", "axis") for k in expr.keywords)
        qualname = analysis.qualified_name(func)
        if qualname is not None:
            return qualname.rsplit(".", 1)[-1] in _SCALAR_REDUCTIONS and len(expr.args) == 1 and without_dim
        if isinstance(func, ast.Attribute) and func.attr in _SCALAR_REDUCTIONS:
            return not expr.args and without_dim
        return False
    if isinstance(expr, ast.Name) and expr.id not in seen and analysis.function is not None:
        values = [
            node.value
            for node in ast.walk(analysis.function.node)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets)
        ]
        return len(values) == 1 and is_scalar_condition(values[0], analysis, seen | {expr.id})
    return False


_ELEMENTWISE = frozenset(
    "relu sigmoid tanh exp expm1 log1p abs neg negative sin cos clamp clamp_min clamp_max clip square silu gelu".split()
)


# Keyword arguments of elementwise functions that are operands like the positional ones.
_BOUND_KEYWORDS = {"clamp": ("min", "max"), "clip": ("min", "max"), "clamp_min": ("min",), "clamp_max": ("max",)}

Signature = tuple[frozenset[str], frozenset[str]]


def elementwise_bases(
    expr: ast.expr, analysis: FunctionAnalysis, resolve: Callable[[str], Signature | None] | None = None
) -> Signature | None:
    """The tensors `expr` is computed from elementwise, and whether it mixes in float literals
    (`x_1 + y_1` → ({x_1, y_1}, {}); `x * 0.5` → ({x}, {float}): a float literal promotes integer
    tensors, an int literal never changes a tensor's dtype); None when it is not plainly
    elementwise. Two values with equal signatures have the same shape and dtype, so `torch.where`
    neither broadcasts nor promotes either of them. `resolve` gives the signature a local name
    holds at this point; by default a name assigned once in the function is followed to its value.
    """
    if isinstance(expr, ast.Constant):
        if type(expr.value) in (int, bool):
            return frozenset(), frozenset()
        if type(expr.value) is float:
            return frozenset(), frozenset({"float"})
        return None
    if analysis.kind(expr) is Kind.PYTHON:  # a Python scalar: no shape of its own; may be a float
        return frozenset(), frozenset({"float"})
    if resolve is None:
        resolve = lambda name: _follow(name, analysis, frozenset())  # noqa: E731
    if isinstance(expr, ast.Name):
        return resolve(expr.id)
    if isinstance(expr, ast.Attribute):
        name = dotted(expr)
        return None if name is None else _opaque(name)
    parts: list[ast.expr]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
        parts = [expr.left, expr.right]
    elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        parts = [expr.operand]
    elif isinstance(expr, ast.Call):
        qualname = analysis.qualified_name(expr.func)
        name = qualname.rsplit(".", 1)[-1] if qualname else (expr.func.attr if isinstance(expr.func, ast.Attribute) else None)
        if name not in _ELEMENTWISE or any(k.arg not in _BOUND_KEYWORDS.get(name, ()) for k in expr.keywords):
            return None
        parts = list(expr.args) if qualname else [expr.func.value, *expr.args]  # type: ignore[attr-defined]
        parts.extend(k.value for k in expr.keywords)
    else:
        return None
    bases: set[str] = set()
    literals: set[str] = set()
    for part in parts:
        found = elementwise_bases(part, analysis, resolve)
        if found is None:
            return None
        bases |= found[0]
        literals |= found[1]
    return frozenset(bases), frozenset(literals)


def _follow(name: str, analysis: FunctionAnalysis, seen: frozenset[str]) -> Signature | None:
    """A name assigned once in the function stands for its value; any other name for itself."""
    definition = None if name in seen else _unique_definition(name, analysis)
    if definition is None:
        return _opaque(name)
    return elementwise_bases(definition, analysis, lambda other: _follow(other, analysis, seen | {name}))


def _opaque(name: str) -> Signature:
    return frozenset({name}), frozenset()


def _unique_definition(name: str, analysis: FunctionAnalysis) -> ast.expr | None:
    """The value of `name` when the function assigns it exactly once (and it is not a parameter)."""
    function = analysis.function
    if function is None:
        return None
    args = function.node.args
    if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return None
    values = [
        node.value
        for node in ast.walk(function.node)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        and any(isinstance(t, ast.Name) and t.id == name for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
    ]
    return values[0] if len(values) == 1 and values[0] is not None else None
