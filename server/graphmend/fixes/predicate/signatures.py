"""Shape and dtype signatures: what each path's value is elementwise in, so that `torch.where`
provably neither broadcasts nor promotes."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ...analysis import known_ops
from ...analysis.liveness import reaching_values
from ...analysis.shapes import FLOATING, Signature, elementwise_bases
from ...inference import FunctionAnalysis
from ...kinds import Kind
from ...semantics import walk
from .site import Site


def signature(site: Site, value: ast.expr, known: dict[str, Signature | None]) -> Signature | None:
    """`value`'s signature inside an arm: names assigned earlier in the arm (`known`), else before the `if`."""
    return elementwise_bases(
        value, site.analysis, lambda name: known[name] if name in known else old_signature(site, name)
    )


def old_signature(site: Site, name: str) -> Signature | None:
    if "." in name:  # a stored attribute: its value before the `if` is opaque
        return frozenset({name}), frozenset()
    definition = reaching_definition(site, name)
    if isinstance(definition, ast.Name) and definition.id == name:
        return frozenset({name}), frozenset()
    # Elementwise in other names: compare by those; anything else is this one tensor.
    return elementwise_bases(definition, site.analysis) or (frozenset({name}), frozenset())


def reaching_definition(site: Site, name: str) -> ast.expr:
    """The value `name` holds before the `if` when one plain assignment gives it; else the name."""
    values = reaching_values(site.function.node, site.node, name)
    return values[0][1] if values is not None and len(values) == 1 else ast.Name(id=name)


def shape_difference(site: Site, signatures_per_path: list[Signature | None]) -> str | None:
    """How the paths' values may differ in shape or dtype, in words; None where every path's value
    provably has the same shape and dtype."""
    signatures = {_without_promotion(site, s) for s in signatures_per_path}
    if None in signatures or len(signatures) != 1 or not next(iter(signatures))[0]:  # type: ignore[index]
        return dtype_difference(signatures) or SHAPE_OR_DTYPE
    return None


SHAPE_OR_DTYPE = "the paths' values may differ in shape or dtype (torch.where broadcasts and promotes)"


def dtype_difference(signatures: set[Signature | None]) -> str | None:
    """What differs when the paths' values are elementwise in the same tensors and differ only by
    what a number does to their dtype: the hazard in words; None otherwise."""
    known = [signature for signature in signatures if signature is not None]
    if len(known) != len(signatures) or len({bases for bases, _ in known}) != 1 or not known[0][0]:
        return None
    names = ", ".join(f"`{name}`" for name in sorted(known[0][0]))
    literals = {literal for _, found in known for literal in found}
    if literals == {"int"}:
        return (
            f"if {names} is a bool tensor (graphmend does not know its dtype), a number makes one path's value "
            "int64 where another's stays bool"
        )
    if literals == {"float"}:
        return f"if {names} is an integer or bool tensor, one path's value is floating point where another's is not"
    return None


def _without_promotion(site: Site, signature: Signature | None) -> Signature | None:
    """A Python float cannot change the dtype of a tensor known to be floating point: one of the
    names the condition proves floating, or anything elementwise in all the tensors such a name is
    elementwise in (`h = residual + h` is floating, so one of its operands is, and so is every
    elementwise combination of both: `torch.clamp(residual + h, min=-c)` keeps the dtype)."""
    if signature is None or not signature[0]:
        return signature
    if (
        signature[0] <= site.floating
        or any(bases <= signature[0] for bases in _floating_bases(site))
        or any(_made_floating(site, name) for name in signature[0])
    ):
        return signature[0], signature[1] - {"float", "int"}  # a floating tensor keeps its dtype with any number
    return signature


def _made_floating(site: Site, name: str) -> bool:
    """`name` holds a floating point tensor before the `if` by every assignment that can reach it: a
    cast (`h = x.float()`), a function whose result is floating for a floating input, arithmetic of a
    floating tensor with real values, or what keeps its operand's dtype (dropout, clamp). An `if`
    before it counts when each of its paths leaves `name` floating. A layer's output does not: its
    weights are complex after `module.to(torch.cfloat)` (issue 67, review 12)."""
    if "." in name:
        return False
    return _floating_before(site, site.node, name, _DEPTH)


_DEPTH = 8  # definitions followed back, at most: enough for a layer's residual chain
# Functions whose result has their first argument's dtype (or raises).
_DTYPE_KEEPING = frozenset(
    "torch.nn.functional.dropout torch.dropout torch.clamp torch.clip torch.relu torch.nn.functional.relu".split()
)
_FLOATING_METHODS = frozenset("float half double bfloat16".split())


def _floating_before(site: Site, stmt: ast.stmt, name: str, depth: int) -> bool:
    values = reaching_values(site.function.node, stmt, name)
    return values is not None and all(
        where is not None and _floating_value(site, where, value, depth - 1) for where, value in values
    )


def _floating_value(site: Site, stmt: ast.stmt, value: ast.expr, depth: int) -> bool:
    """`value`, evaluated at `stmt`, is a floating point tensor."""
    if depth <= 0:
        return False
    if isinstance(value, ast.Name):
        return _floating_before(site, stmt, value.id, depth)
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        # floating where one operand is a floating tensor and the other real (a complex one would make
        # it complex: `x.float() * freqs_cis`, review 12)
        return all(_real_operand(site, stmt, side, depth - 1) for side in (value.left, value.right)) and any(
            _floating_value(site, stmt, side, depth - 1) for side in (value.left, value.right)
        )
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _FLOATING_METHODS and not value.args and not value.keywords:
        return site.analysis.kind(func.value).is_tensor
    qualname = site.analysis.qualified_name(func)
    if qualname is not None and qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in FLOATING:
        return bool(value.args) and _floating_value(site, stmt, value.args[0], depth - 1)  # complex stays complex
    if qualname in _DTYPE_KEEPING and value.args:
        return _floating_value(site, stmt, value.args[0], depth - 1)
    return False  # a layer's output too: `module.to(torch.cfloat)` makes its weights complex (review 12)


def _real_operand(site: Site, stmt: ast.stmt, value: ast.expr, depth: int) -> bool:
    """A real number written in the code, or a floating point tensor: combined, nothing complex."""
    literal = value.operand if isinstance(value, ast.UnaryOp) else value
    if isinstance(literal, ast.Constant):
        return type(literal.value) in (int, float)
    return _floating_value(site, stmt, value, depth)


def _floating_bases(site: Site) -> list[frozenset[str]]:
    """The tensors each proven-floating name is elementwise in, before the `if` (a value mixed with
    a float literal proves nothing about its tensors)."""
    found = []
    for name in site.floating:
        before = old_signature(site, name)
        if before is not None and before[0] and not before[1]:
            found.append(before[0])
    return found


def ordered_names(test: ast.expr) -> frozenset[str]:
    """The tensors an ordering comparison of the condition orders (`x` of `x.sum() > 0`, not of
    `x.abs().sum() > 0`, which is real for a complex `x`): torch orders no complex values, so where
    they were complex the original raised at the condition already."""
    found: set[str] = set()
    for node in walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            for operand in (node.left, *node.comparators):
                base = _dtype_kind_base(operand)
                if base is not None:
                    found.add(base)
    return frozenset(found)


# Methods whose result is complex where their tensor is (a reduction, a view, a copy).
_COMPLEX_KEEPING = frozenset(
    "sum mean prod cumsum view reshape flatten squeeze unsqueeze transpose permute contiguous clone detach".split()
)


def _dtype_kind_base(expr: ast.expr) -> str | None:
    """The name `expr` computes from without leaving its dtype's kind (`x` of `x.sum()`, `x[0]`)."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _COMPLEX_KEEPING:
            expr = expr.func.value
        else:
            return None


def unproven_finfo(
    trees: list[ast.AST],
    analysis: FunctionAnalysis,
    floating: Callable[[str], bool],
    real: frozenset[str] = frozenset(),
) -> list[str]:
    """What a branch the rewrite now runs on every call does that raises for a tensor of some
    dtype, where that tensor is not proven floating point (`floating`): `torch.finfo(x.dtype)`
    (TypeError for an integer or bool `x`, on which the original may never have taken the branch:
    `if torch.isinf(x).any():` is false for them), and an allowlisted operation torch has no kernel
    for on some dtypes (`known_ops.DTYPE_LIMITED`: `x.mean()` of an integer tensor, `x.clamp(...)`
    of a complex one; not for a tensor the condition orders, `real`). The hazard in words for each."""
    found: list[str] = []
    for tree in trees:
        for node in walk(tree):
            if isinstance(node, ast.Compare):
                words = _ordering_words(node, analysis, floating, real)
            elif isinstance(node, (ast.BinOp, ast.UnaryOp)):
                words = _bitwise_words(node, analysis) or _operator_words(node, analysis, floating, real)
            elif isinstance(node, ast.Call):
                words = (
                    _finfo_words(node, analysis, floating)
                    or _limited_words(node, analysis, floating, real)
                    or _real_cast_words(node, analysis, floating, real)
                )
            else:
                continue
            if words is not None and words not in found:
                found.append(words)
    return found


def _finfo_words(node: ast.Call, analysis: FunctionAnalysis, floating: Callable[[str], bool]) -> str | None:
    if not (
        analysis.qualified_name(node.func) == "torch.finfo"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Attribute)
        and node.args[0].attr == "dtype"
    ):
        return None
    owner = ast.unparse(node.args[0].value)
    if floating(owner):
        return None
    return (
        f"a branch takes `torch.finfo({owner}.dtype)`, which raises TypeError where `{owner}` is an integer "
        "or bool tensor (graphmend does not know its dtype), and the rewrite runs that branch on every call"
    )


def _limited_words(
    node: ast.Call, analysis: FunctionAnalysis, floating: Callable[[str], bool], real: frozenset[str]
) -> str | None:
    """`x.mean()`, `torch.clamp(x, ...)`, `F.relu(x)` of an `x` not proven floating point."""
    qualname = analysis.qualified_name(node.func)
    if isinstance(node.func, ast.Name) and node.func.id == "abs" and "abs" not in analysis.shadowed_names:
        qualname = "torch.abs"  # the builtin calls the tensor's `abs`
    if qualname is not None:
        name, operand = qualname, node.args[0] if node.args else None
    elif isinstance(node.func, ast.Attribute) and (
        analysis.kind(node.func.value).is_tensor or analysis.kind(node.func.value) is Kind.UNKNOWN
    ):
        name, operand = known_ops.METHOD + node.func.attr, node.func.value
    else:
        return None
    given = [
        k.arg for k in node.keywords if k.arg and not (isinstance(k.value, ast.Constant) and k.value.value is None)
    ]
    kinds = known_ops.dtype_limited(name, given)
    exponent = node.args[-1] if node.args and name in ("torch.pow", known_ops.METHOD + "pow") else None
    if exponent is not None and _negative_literal(exponent):  # `x.pow(-2)` of an integer tensor raises
        kinds |= {"integer"}
    if operand is not None and _names(operand) <= real:
        kinds -= {"complex"}
    if not kinds or operand is None or _proven_floating(operand, analysis, floating):
        return None
    shown = name.replace(known_ops.METHOD, ".", 1)
    listed = " or ".join(sorted(kinds))
    article = "an" if listed[0] in "aeiou" else "a"
    return (
        f"a branch calls `{shown}` on `{ast.unparse(operand)}`, which torch does not compute for {article} "
        f"{listed} tensor (graphmend does not know its dtype): it raises where the caller passes "
        "one, also where the original did not run the branch"
    )


_REAL_CASTS = frozenset({"float", "double", "half", "bfloat16"})
_REAL_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "float", "double", "half"})


def _real_cast_words(
    node: ast.Call, analysis: FunctionAnalysis, floating: Callable[[str], bool], real: frozenset[str]
) -> str | None:
    """`x.float()`, `x.sum(dtype=torch.float64)` of a tensor that may be complex: torch warns that
    the cast discards the imaginary part, so under `-W error` it raises, where the original may
    never have run the branch (review 9)."""
    if not isinstance(node.func, ast.Attribute):
        return None
    operand = node.func.value
    kind = analysis.kind(operand)
    if not (kind.is_tensor or kind is Kind.UNKNOWN) or isinstance(operand, ast.Constant):
        return None
    dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    casts = node.func.attr in _REAL_CASTS or (
        isinstance(dtype, ast.Attribute) and dtype.attr in _REAL_DTYPES and kind.is_tensor
    )
    if not casts or _names(operand) <= real or _proven_floating(operand, analysis, floating):
        return None
    return (
        f"a branch computes `{ast.unparse(node)}`, a cast to a real dtype, which warns for a complex tensor (its "
        "imaginary part discarded; graphmend does not know the dtype): under `-W error` it raises, also where the "
        "original did not run the branch"
    )


def _operator_words(
    node: ast.BinOp | ast.UnaryOp, analysis: FunctionAnalysis, floating: Callable[[str], bool], real: frozenset[str]
) -> str | None:
    """`x // 2`, `x % 2` of a tensor that may be complex, `x ** -2` of one that may be an integer:
    torch raises for them (review 9), where the original may never have run the branch."""
    if not isinstance(node, ast.BinOp):
        return None
    operand = node.left
    kind = analysis.kind(operand)
    if not (kind.is_tensor or kind is Kind.UNKNOWN) or isinstance(operand, ast.Constant):
        return None
    if _proven_floating(operand, analysis, floating):
        return None
    symbol = {ast.FloorDiv: "//", ast.Mod: "%"}.get(type(node.op))
    if symbol is not None and kind is not Kind.UNKNOWN and not _names(operand) <= real:
        return (
            f"a branch computes `{ast.unparse(node)}`, which torch does not compute for a complex tensor (graphmend "
            "does not know the dtype): it raises where the caller passes one, also where the original did not run "
            "the branch"
        )
    exponent = _negative_literal(node.right) if isinstance(node.op, ast.Pow) else False
    if exponent and kind.is_tensor:
        return (
            f"a branch computes `{ast.unparse(node)}`, a negative power, which torch refuses for an integer tensor "
            "(graphmend does not know the dtype): it raises where the caller passes one, also where the original did "
            "not run the branch"
        )
    return None


def _negative_literal(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.UnaryOp)
        and isinstance(expr.op, ast.USub)
        and isinstance(expr.operand, ast.Constant)
        and isinstance(expr.operand.value, (int, float))
        and expr.operand.value > 0
    )


_BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Invert)


def _bitwise_words(node: ast.BinOp | ast.UnaryOp, analysis: FunctionAnalysis) -> str | None:
    """`~m`, `a & b` of a tensor not proven bool: torch computes bitwise operations for bool and
    integer tensors only, so a floating mask the original never inverted now raises."""
    if not isinstance(node.op, _BITWISE):
        return None
    operands = (node.operand,) if isinstance(node, ast.UnaryOp) else (node.left, node.right)
    for operand in operands:
        kind = analysis.kind(operand).present
        if kind in (Kind.TENSOR, Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS) and not isinstance(operand, ast.Constant):
            return (
                f"a branch computes `{ast.unparse(node)}`, which torch computes for bool and integer tensors only "
                f"(graphmend does not know the dtype of `{ast.unparse(operand)}`): it raises where the caller passes a "
                "floating one, also where the original did not run the branch"
            )
    return None


def _ordering_words(
    node: ast.Compare, analysis: FunctionAnalysis, floating: Callable[[str], bool], real: frozenset[str]
) -> str | None:
    """`h > 0` of a tensor `h` not proven floating point, nor ordered by the condition: torch orders
    no complex values."""
    if not any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
        return None
    for operand in (node.left, *node.comparators):
        if _names(operand) <= real:
            continue
        kind = analysis.kind(operand)
        if (kind.is_tensor or kind is Kind.UNKNOWN) and not isinstance(operand, ast.Constant):
            if not _proven_floating(operand, analysis, floating) and kind is not Kind.PYTHON:
                return (
                    f"a branch compares `{ast.unparse(node)}`, which torch does not compute for a complex tensor "
                    "(graphmend does not know the dtype): it raises where the caller passes one, also where the "
                    "original did not run the branch"
                )
    return None


def _names(expr: ast.expr) -> set[str]:
    return {n.id for n in walk(expr) if isinstance(n, ast.Name)}


# Methods whose result has their tensor's dtype.
_SAME_DTYPE_METHODS = frozenset(
    "view reshape flatten squeeze unsqueeze transpose permute contiguous clone detach expand narrow select".split()
)


def _proven_floating(operand: ast.expr, analysis: FunctionAnalysis, floating: Callable[[str], bool]) -> bool:
    """A name proven floating point (`floating_before`), a cast to a real floating dtype, or
    arithmetic of such."""
    if isinstance(operand, ast.Name):
        return floating(operand.id)
    if isinstance(operand, ast.BinOp):
        return any(_proven_floating(side, analysis, floating) for side in (operand.left, operand.right)) and not any(
            analysis.kind(side).is_tensor and not _proven_floating(side, analysis, floating)
            for side in (operand.left, operand.right)
        )
    if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute):
        if operand.func.attr in _FLOATING_METHODS:
            return True
        if operand.func.attr in _SAME_DTYPE_METHODS:
            return _proven_floating(operand.func.value, analysis, floating)
    return False


def floating_before(site: Site, name: str) -> bool:
    """`name` is a floating point tensor just before the `if`: the condition proves it, or every
    assignment that reaches it does (`_made_floating`)."""
    return name in site.floating or _made_floating(site, name)
