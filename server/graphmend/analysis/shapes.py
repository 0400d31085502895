"""Shapes and dtypes without running the code: is a condition one element, do two values match.

`torch.where(cond, a, b)` broadcasts `a` and `b` and promotes their dtypes, and goes elementwise
on a condition with several elements: a predicated rewrite is exact only when neither happens.
These checks decide it from how values are computed (elementwise from the same tensors), and say
"unknown" otherwise, which makes a fix unsafe, never wrong.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from .. import torch_api
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import self_stores, walk
from .module_state import annotated_as, holds_a_configuration
from .purity import assigned_once, dotted

_SCALAR_REDUCTIONS = torch_api.REDUCTION_METHODS


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
    if isinstance(expr, ast.Name) and expr.id not in seen:  # bound once, to a value of one element
        value = assigned_once(expr.id, analysis)
        if value is not None and is_scalar_condition(value, analysis, seen | {expr.id}):
            return True
    if isinstance(expr, ast.Attribute) and analysis.kind(expr.value) is Kind.SELF:
        return analysis.kind(expr) in (Kind.PYTHON, Kind.NONE) or _scalar_attribute(expr.attr, analysis, seen)
    kind = analysis.kind(expr)
    if not kind.is_tensor:
        return kind in (Kind.PYTHON, Kind.NONE)
    if isinstance(expr, ast.Call):
        func = expr.func
        without_dim = not any(k.arg in ("dim", "axis") for k in expr.keywords)
        qualname = analysis.qualified_name(func)
        if qualname is not None:
            if qualname.rsplit(".", 1)[-1] not in _SCALAR_REDUCTIONS or not expr.args:
                return False
            if len(expr.args) == 1 and without_dim:
                return True
            return _reduces_a_vector(expr, expr.args[0], expr.args[1:], analysis)
        if isinstance(func, ast.Attribute) and func.attr in _SCALAR_REDUCTIONS:
            if not expr.args and without_dim:
                return True
            return _reduces_a_vector(expr, func.value, expr.args, analysis)
        return False
    return False


_NUMBER_ANNOTATIONS = frozenset({"int", "float", "bool"})


def _scalar_attribute(attribute: str, analysis: FunctionAnalysis, seen: frozenset[str]) -> bool:
    """`self.<attribute>` holds one number on every path: every binding of it in the class (and its
    same-file bases) stores a number (a constant, a parameter annotated `int`/`float`/`bool`, a field
    of a `...Config` parameter or of `self.config`), another such attribute, or a value of one
    element in its own method (Phi-3's `self.max_seq_len_cached = seq_len`, `seq_len =
    torch.max(position_ids) + 1`). A buffer, an unpacking or any other store: unknown."""
    method = analysis.function.method if analysis.function is not None else None
    key = f"self.{attribute}"
    if method is None or method.owner is None or key in seen:
        return key in seen  # a cycle adds no new value
    stores = list(self_stores(method.owner, attribute))
    if not stores:
        return False
    for store_method, target in stores:
        value = _stored_value(store_method.node, target)
        if value is None:
            return False
        probe = FunctionAnalysis(analysis.module, store_method)
        if not (_is_number(value, store_method.node, probe) or is_scalar_condition(value, probe, seen | {key})):
            return False
    return True


def _stored_value(function: ast.FunctionDef | ast.AsyncFunctionDef, target: ast.AST) -> ast.expr | None:
    """The value `target` is bound to by a plain `target = value` (or `target += value`, which keeps
    one number one number) in `function`; None for anything else."""
    for node in walk(function):
        if isinstance(node, ast.Assign) and any(t is target for t in node.targets):
            return node.value
        if isinstance(node, ast.AugAssign) and node.target is target:
            return node.value
    return None


def _is_number(value: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef, analysis: FunctionAnalysis) -> bool:
    """A number by how it is written: a constant, a parameter annotated as one, or a field of a
    configuration object (`config.max_position_embeddings`, `self.config.rope_theta`)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float, bool)) or value.value is None
    if isinstance(value, ast.Name):
        return annotated_as(function, value.id) in _NUMBER_ANNOTATIONS
    if isinstance(value, ast.Attribute):
        root = value.value
        if isinstance(root, ast.Attribute):
            return holds_a_configuration(root, analysis)
        return isinstance(root, ast.Name) and (annotated_as(function, root.id) or "").endswith("Config")
    return False


def _reduces_a_vector(call: ast.Call, reduced: ast.expr, dims: list[ast.expr], analysis: FunctionAnalysis) -> bool:
    """`torch.sum(v.view(-1), dim=0)`, `v.flatten().amax(-1)`: a reduction along the only dimension
    of a one-dimensional value, without `keepdim`, is 0-d."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if (analysis.qualified_name(call.func) or name).rsplit(".", 1)[-1] not in _DIM_REDUCTIONS:
        return False
    dim = [*dims, *(k.value for k in call.keywords if k.arg in ("dim", "axis"))]
    if len(dim) != 1 or not (_is_minus_one(dim[0]) or _is_zero(dim[0])):
        return False
    if any(
        k.arg == "keepdim" and not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in call.keywords
    ):
        return False
    return is_one_dimensional(reduced, analysis)


# Reductions whose first positional argument is `dim` and that return one tensor with it (`max`,
# `min`, `median` return values and indices; `norm`'s first argument is `p`).
_DIM_REDUCTIONS = frozenset(
    "sum mean prod amax amin any all count_nonzero logsumexp nansum nanmean argmax argmin".split()
)


def _is_zero(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value == 0


def is_one_dimensional(expr: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """`v.view(-1)`, `v.reshape(-1)`, `v.flatten()`, `v.ravel()`, `torch.flatten(v)`, or a name the
    function assigns once to one of them."""
    if isinstance(expr, ast.Name) and expr.id not in seen:
        value = assigned_once(expr.id, analysis)
        return value is not None and is_one_dimensional(value, analysis, seen | {expr.id})
    if not isinstance(expr, ast.Call) or expr.keywords:
        return False
    qualname = analysis.qualified_name(expr.func)
    if qualname in ("torch.flatten", "torch.ravel"):
        return len(expr.args) == 1
    if not isinstance(expr.func, ast.Attribute) or analysis.kind(expr.func.value) is Kind.PYTHON:
        return False  # the reduction of it is a tensor (its caller's test): so is this, unless a Python value
    method, arguments = expr.func.attr, expr.args
    if method in ("flatten", "ravel"):
        return not arguments
    return method in ("view", "reshape") and len(arguments) == 1 and _is_minus_one(arguments[0])


def _is_minus_one(expr: ast.expr) -> bool:
    """`-1` or `(-1,)`."""
    if isinstance(expr, ast.Tuple) and len(expr.elts) == 1:
        expr = expr.elts[0]
    return (
        isinstance(expr, ast.UnaryOp)
        and isinstance(expr.op, ast.USub)
        and isinstance(expr.operand, ast.Constant)
        and type(expr.operand.value) is int
        and expr.operand.value == 1
    )


_ELEMENTWISE = frozenset(
    "relu sigmoid tanh exp expm1 log1p abs neg negative sin cos clamp clamp_min clamp_max clip square silu gelu".split()
)
# Those of them whose result is floating for an integer or bool input (`torch.sigmoid` of an int64
# tensor is float32): like a float literal, they may change the dtype.
FLOATING = frozenset("sigmoid tanh exp expm1 log1p sin cos silu gelu".split())


# Keyword arguments of elementwise functions that are operands like the positional ones.
_BOUND_KEYWORDS = {"clamp": ("min", "max"), "clip": ("min", "max"), "clamp_min": ("min",), "clamp_max": ("max",)}

Signature = tuple[frozenset[str], frozenset[str]]


def elementwise_bases(
    expr: ast.expr, analysis: FunctionAnalysis, resolve: Callable[[str], Signature | None] | None = None
) -> Signature | None:
    """The tensors `expr` is computed from elementwise, and what may change their dtype
    (`x_1 + y_1` → ({x_1, y_1}, {}); `x * 0.5`, `x / 2` and `torch.sigmoid(x)` → ({x}, {float}): a
    float literal, true division or a floating function makes integer tensors float; `mask * 2` → ({mask}, {int}): a
    number makes a bool tensor int64, and changes no other dtype); None when it is not plainly
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
    selection = False  # `torch.where(cond, a, b)`: promotes like `a + b`
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        parts = [expr.left, expr.right]
    elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        parts = [expr.operand]
    elif isinstance(expr, ast.Call):
        qualname = analysis.qualified_name(expr.func)
        name = (
            qualname.rsplit(".", 1)[-1]
            if qualname
            else (expr.func.attr if isinstance(expr.func, ast.Attribute) else None)
        )
        if qualname == "torch.where" and len(expr.args) == 3 and not expr.keywords:
            # A selection on one element is one of its values, broadcast and promoted as `a + b` is
            # (what a predicated `if` inside another one leaves: the outer rewrite compares it)
            if not is_scalar_condition(expr.args[0], analysis):
                return None
            parts, selection = list(expr.args[1:]), True
        elif name not in _ELEMENTWISE or any(k.arg not in _BOUND_KEYWORDS.get(name, ()) for k in expr.keywords):
            return None
        else:
            parts = list(expr.args) if qualname else [expr.func.value, *expr.args]  # type: ignore[attr-defined]
            parts.extend(k.value for k in expr.keywords)
    else:
        return None
    bases: set[str] = set()
    literals: set[str] = set()
    if (isinstance(expr, ast.Call) and name in FLOATING) or (
        isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div)
    ):
        literals.add("float")  # true division too: an integer tensor divided is floating
    if (isinstance(expr, ast.BinOp) or selection) and any(_may_be_bool(p, analysis, resolve) for p in parts):
        if any(not analysis.kind(p).is_tensor for p in parts):
            literals.add("int")  # a bool tensor and a number: int64 (a dtype graphmend does not know may be bool)
    for part in parts:
        found = elementwise_bases(part, analysis, resolve)
        if found is None:
            return None
        bases |= found[0]
        literals |= found[1]
    return frozenset(bases), frozenset(literals)


def _may_be_bool(
    expr: ast.expr, analysis: FunctionAnalysis, resolve: Callable[[str], Signature | None] | None = None
) -> bool:
    """A tensor operand that may be bool: one known to be, or one whose dtype is not known (issue
    42: an unknown dtype is taken for possibly bool). A Python value or a constant is not. Names
    resolve as in the expression it is part of (`x = x * m`: `x` is not followed into itself)."""
    if isinstance(expr, ast.Constant):
        return False
    kind = analysis.kind(expr).present
    if kind is Kind.BOOL_TENSOR:
        return True
    if kind not in (Kind.TENSOR, Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS):
        return False
    made = elementwise_bases(expr, analysis, resolve)
    return made is None or not made[1]  # made floating, or int64 from a bool: not bool any more


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
    if name in function.parameter_names:
        return None
    stores = [
        node
        for node in walk(function.node)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    ]
    if len(stores) != 1:  # bound again elsewhere: by another assignment, a tuple's unpacking, `+=`, a `for`
        return None
    values = [
        node.value
        for node in walk(function.node)
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is stores[0])
        or (isinstance(node, ast.AnnAssign) and node.target is stores[0])
    ]
    return values[0] if len(values) == 1 and values[0] is not None else None
