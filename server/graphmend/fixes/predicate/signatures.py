"""Shape and dtype signatures: what each path's value is elementwise in, so that `torch.where`
provably neither broadcasts nor promotes."""

from __future__ import annotations

import ast

from ...analysis import liveness
from ...analysis.shapes import Signature, elementwise_bases
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
    """The value `name` holds before the `if`, when plain assignments before it say so.

    Walks back through the enclosing blocks (out of `if`/`with` bodies, never out of a loop,
    where the value may come from the previous iteration).
    """
    target: ast.stmt = site.node
    while True:
        found = liveness.locate(site.function.node, target)
        if found is None:
            return ast.Name(id=name)
        holder, block, index = found
        for stmt in reversed(block[:index]):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return stmt.value if len(stmt.targets) == 1 else ast.Name(id=name)
            if name in {n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                return ast.Name(id=name)
        if not isinstance(holder, (ast.If, ast.With)) or block is not getattr(holder, "body", None):
            return ast.Name(id=name)
        target = holder


def require_same_shape(site: Site, signatures_per_path: list[Signature | None]) -> None:
    """Mark the fix unsafe unless every path's value provably has the same shape and dtype."""
    signatures = {_without_promotion(site, s) for s in signatures_per_path}
    if None in signatures or len(signatures) != 1 or not next(iter(signatures))[0]:  # type: ignore[index]
        site.unsafe(dtype_difference(signatures) or SHAPE_OR_DTYPE)


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
    """`name` holds, before the `if`, the output of a submodule built in `__init__` as a layer with
    floating weights (`h = self.final_layer_norm(h)` after `self.final_layer_norm = nn.LayerNorm(d)`)."""
    owner = site.owner
    if owner is None or "." in name:
        return False
    definition = reaching_definition(site, name)
    if not (
        isinstance(definition, ast.Call)
        and isinstance(definition.func, ast.Attribute)
        and isinstance(definition.func.value, ast.Name)
        and definition.func.value.id == site.self_name
        and owner.find_method(definition.func.attr) is None
    ):
        return False
    built = site.analysis.module.constructors(owner).get(definition.func.attr, frozenset())
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
