"""Shape and dtype signatures: what each path's value is elementwise in, so that `torch.where`
provably neither broadcasts nor promotes."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ...analysis.liveness import reaching_values
from ...analysis.shapes import FLOATING, Signature, elementwise_bases
from ...inference import FunctionAnalysis
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


# torch.nn layers whose output is floating point whatever their input (their weights are).
_FLOATING_LAYERS = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LayerNorm
    RMSNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d Embedding
    """.split()
)


def _made_floating(site: Site, name: str) -> bool:
    """`name` holds a floating point tensor before the `if` by every assignment that can reach it:
    a submodule built in `__init__` as a layer with floating weights (`h = self.final_layer_norm(h)`
    after `self.final_layer_norm = nn.LayerNorm(d)`), a sum, difference, product or quotient with
    such a value (`h = residual + h`: int or bool with float is float), or what keeps its operand's
    dtype (dropout, clamp). An `if` before it counts when each of its paths
    leaves `name` floating (rt_detr's `if not self.normalize_before: h = self.final_layer_norm(h)`)."""
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
        # a floating tensor with anything it combines with is floating (promotion by category)
        return _floating_value(site, stmt, value.left, depth - 1) or _floating_value(site, stmt, value.right, depth - 1)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _FLOATING_METHODS and not value.args and not value.keywords:
        return site.analysis.kind(func.value).is_tensor
    qualname = site.analysis.qualified_name(func)
    if qualname is not None and qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in FLOATING:
        return bool(value.args)  # floating for any input dtype
    if qualname in _DTYPE_KEEPING and value.args:
        return _floating_value(site, stmt, value.args[0], depth - 1)
    return _floating_layer(site, value)


def _floating_layer(site: Site, call: ast.Call) -> bool:
    """`call` runs a submodule built in `__init__` as a layer with floating weights."""
    owner = site.owner
    func = call.func
    if not (
        owner is not None
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == site.self_name
        and owner.find_method(func.attr) is None
    ):
        return False
    built = site.analysis.module.constructors(owner).get(func.attr, frozenset())
    return bool(built) and all(c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in _FLOATING_LAYERS for c in built)


def _floating_bases(site: Site) -> list[frozenset[str]]:
    """The tensors each proven-floating name is elementwise in, before the `if` (a value mixed with
    a float literal proves nothing about its tensors)."""
    found = []
    for name in site.floating:
        before = old_signature(site, name)
        if before is not None and before[0] and not before[1]:
            found.append(before[0])
    return found


def unproven_finfo(trees: list[ast.AST], analysis: FunctionAnalysis, floating: Callable[[str], bool]) -> list[str]:
    """`torch.finfo(x.dtype)` in a branch the rewrite now runs on every call: it raises TypeError
    where `x` is an integer or bool tensor, on which the original may never have taken the branch
    (`if torch.isinf(x).any():` is false for them). The hazard in words for each `x` not proven
    floating point (`floating`)."""
    found: list[str] = []
    for tree in trees:
        for node in walk(tree):
            if not (
                isinstance(node, ast.Call)
                and analysis.qualified_name(node.func) == "torch.finfo"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Attribute)
                and node.args[0].attr == "dtype"
            ):
                continue
            owner = ast.unparse(node.args[0].value)
            if floating(owner):
                continue
            words = (
                f"a branch takes `torch.finfo({owner}.dtype)`, which raises TypeError where `{owner}` is an integer "
                "or bool tensor (graphmend does not know its dtype), and the rewrite runs that branch on every call"
            )
            if words not in found:
                found.append(words)
    return found


def floating_before(site: Site, name: str) -> bool:
    """`name` is a floating point tensor just before the `if`: the condition proves it, or every
    assignment that reaches it does (`_made_floating`)."""
    return name in site.floating or _made_floating(site, name)
