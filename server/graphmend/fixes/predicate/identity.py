"""Whether a value a path selects is a tensor nobody else holds: the identity a rewrite may replace.

`torch.where` always makes a new tensor. Where the original gave an object somebody else holds too
(the caller's tensor, a module's buffer, another name's tensor, or an input an operation gave back as
it is: `x.float()` of a float tensor, `torch.atleast_1d(x)`), an in-place change of the result, `is`,
or a returned leaf's `.grad` now tell the two apart. Reviews 5, 8, 9 and 11 of issue 67 each found
the next form of it, one list of aliasing operations at a time, so the question is turned around: a
value is taken as new only where this call of the function made it, by arithmetic or by an operation
torch's own run shows always allocates (`known_ops.FRESH`), followed through the names it was bound
to; and only while no other name still holds it.
"""

from __future__ import annotations

import ast

from ...analysis import known_ops, liveness
from ...inference import FunctionAnalysis
from ...kinds import Kind
from ...semantics import walk
from .arms import is_number


def held_elsewhere(value: ast.expr, analysis: FunctionAnalysis, at: ast.stmt) -> str | None:
    """What `value` (read just before `at`) may be that somebody else holds, as words for a hazard,
    or None for a tensor made here that no other name holds."""
    return _held(value, analysis, at, frozenset())


def _held(value: ast.expr, analysis: FunctionAnalysis, at: ast.stmt, seen: frozenset[str]) -> str | None:
    if isinstance(value, ast.Name):
        return _name_held(value.id, analysis, at, seen)
    if isinstance(value, (ast.BinOp, ast.Compare)) or is_number(value):
        return None  # arithmetic on a tensor allocates its result
    if isinstance(value, ast.UnaryOp):
        return None if not isinstance(value.op, ast.UAdd) else f"`{ast.unparse(value)}` (`+` gives the tensor itself)"
    if isinstance(value, ast.Call) and _made_here(value, analysis):
        return None
    if isinstance(value, ast.IfExp):  # either value, as the condition picks
        return _held(value.body, analysis, at, seen) or _held(value.orelse, analysis, at, seen)
    if isinstance(value, ast.Subscript) or (isinstance(value, ast.Attribute) and value.attr in _OF_THE_TENSOR):
        # a piece or view of a tensor is held wherever that tensor is (a new one's by nobody else)
        if _held(value.value, analysis, at, seen) is None:
            return None
    if isinstance(value, ast.Call):
        return (
            f"`{ast.unparse(value)}`, which may give back its input or a tensor held elsewhere (graphmend takes a "
            "result as new only from an operation torch's run of it shows always allocates)"
        )
    return f"`{ast.unparse(value)}`, a tensor the module, a container or the caller may hold"


# Attributes that give a view of the tensor itself or a field of an operation's result (`sort().values`).
_OF_THE_TENSOR = frozenset({"values", "indices", "T", "mT", "H", "mH", "real", "imag", "data"})


def _name_held(name: str, analysis: FunctionAnalysis, at: ast.stmt, seen: frozenset[str]) -> str | None:
    if name in seen or analysis.function is None:
        return None
    if name in ("self", "cls"):
        return f"`{name}`"
    touched = _autograd_settings(name, analysis.function.node)
    if touched is not None:
        return f"`{name}`, a tensor whose autograd settings the function changes (`.{touched}()`)"
    values = liveness.reaching_values(analysis.function.node, at, name)
    if values is None:
        return f"`{name}`, a value graphmend does not follow (bound in a loop, an unpacking, a `try`, a `:=`)"
    for where, bound in values:
        if where is None:
            return f"`{name}`, the caller's own tensor (or a global)"
        held = _held(bound, analysis, at, seen | {name})
        if held is not None:
            return held
    return None


# Methods that make a tensor's identity matter to autograd: its `.grad` kept, its hooks.
_AUTOGRAD_SETTINGS = frozenset({"retain_grad", "requires_grad_", "register_hook", "register_post_accumulate_grad_hook"})


def _autograd_settings(name: str, function: ast.AST) -> str | None:
    """The method of `_AUTOGRAD_SETTINGS` the function calls on `name`, if any (review 13:
    `h.retain_grad()` before the `if`: the returned `h` kept its `.grad`, a new tensor does not)."""
    for node in walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _AUTOGRAD_SETTINGS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            return node.func.attr
    return None


def _made_here(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`call` runs an operation whose every result has memory of its own (`known_ops.FRESH`): a torch
    function, a tensor's method, or `self.layer(...)` where every layer `__init__` may build is one."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return qualname.replace("torch.Tensor.", known_ops.METHOD, 1) in known_ops.FRESH
    if not isinstance(func, ast.Attribute):
        return False
    if analysis.is_self(func.value):
        owner = analysis.owner
        constructors = analysis.module.constructors(owner).get(func.attr, frozenset()) if owner is not None else ()
        return bool(constructors) and all(known_ops.is_layer(c) and c in known_ops.FRESH for c in constructors)
    kind = analysis.kind(func.value)
    return (kind.is_tensor or kind is Kind.UNKNOWN) and known_ops.METHOD + func.attr in known_ops.FRESH


def shared_with(value: ast.expr, name: str, live_after: set[str]) -> str | None:
    """The hazard where a path binds `name` to the object another name that is still read after
    the `if` holds (`h = g`, then `g.add_(1)`): selected, `name` becomes a new tensor, and a change
    through the other name no longer reaches it (issue 67, review 11)."""
    if isinstance(value, ast.Name) and value.id != name and value.id in live_after:
        return (
            f"a path binds {_label(name)} to `{value.id}`'s tensor, and `{value.id}` is read after the `if`: the rewrite "
            f"makes {_label(name)} a new tensor, so an in-place change through `{value.id}` no longer reaches it (and `is` tells "
            "them apart)"
        )
    return None


def identity_words(name: str, held: str) -> str:
    """The hazard of selecting a new tensor where a path gave `name` an object somebody else may hold."""
    held = held.removeprefix(f"`{name}`, ")  # `x` the caller's own tensor, not "`x` is `x`, ..."
    return (
        f"on a path {_label(name)} is {held}; the rewrite makes it a new tensor: an in-place change of the result no "
        "longer reaches the tensor it was, `is` tells them apart, and a returned leaf no longer collects `.grad`"
    )


def _label(name: str) -> str:
    """`y` for a name, as it is for what is not one (the returned value)."""
    return f"`{name}`" if name.isidentifier() else name


def saved_output(value: ast.expr, analysis: FunctionAnalysis, at: ast.stmt) -> str | None:
    """The call whose result `value` is (read just before `at`, through names) when autograd saves
    that result for backward (`known_ops.SAVES_OUTPUT`: `exp`, `sigmoid`, `relu`...), or None."""
    return _saved(value, analysis, at, frozenset())


def _saved(value: ast.expr, analysis: FunctionAnalysis, at: ast.stmt, seen: frozenset[str]) -> str | None:
    if isinstance(value, ast.Name):
        if value.id in seen or analysis.function is None:
            return None
        for where, bound in liveness.reaching_values(analysis.function.node, at, value.id) or ():
            if where is not None:
                saved = _saved(bound, analysis, at, seen | {value.id})
                if saved is not None:
                    return saved
        return None
    if isinstance(value, ast.Call) and _saves(value, analysis):
        return ast.unparse(value)
    return None


def _saves(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return qualname.replace("torch.Tensor.", known_ops.METHOD, 1) in known_ops.SAVES_OUTPUT
    if not isinstance(func, ast.Attribute):
        return False
    if analysis.is_self(func.value):
        owner = analysis.owner
        constructors = analysis.module.constructors(owner).get(func.attr, frozenset()) if owner is not None else ()
        return any(c in known_ops.SAVES_OUTPUT for c in constructors)
    return known_ops.METHOD + func.attr in known_ops.SAVES_OUTPUT


def saved_words(name: str, call: str) -> str:
    """The hazard of selecting a new tensor where a path gave an output autograd saved."""
    return (
        f"{_label(name)} was the output of `{call}`, which autograd saves for backward: an in-place change of it "
        "raised in backward, and after the rewrite it is a new tensor, so that no longer raises"
    )
