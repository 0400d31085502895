"""Why a value is a tensor: the chain of bindings from a finding back to where its tensor comes in.

`h` ← `self.proj(x)` (line 14) ← `x`, a parameter of `Net.forward`: each step is the last binding
of a name before the line that reads it, in the same function, followed through the names of its
value that graphmend takes for tensors. A reader judges a finding by it, and a false alarm shows its
wrong link. Shown as related information (kind "value"), in the JSON and in the hover.
"""

from __future__ import annotations

import ast

from .diagnostics import RelatedLocation
from .inference import FunctionAnalysis
from .kinds import OPTIONAL_TENSORS, TENSORISH, Kind
from .regions import bound_names
from .semantics import walk
from .source import SourceText

_TRACED = (*TENSORISH, *OPTIONAL_TENSORS, Kind.NUMPY, Kind.TENSOR_ON_SOME_PATHS)
_MAX_STEPS = 6
_MAX_TEXT = 60


def value_chain(expr: ast.AST, analysis: FunctionAnalysis, source: SourceText) -> tuple[RelatedLocation, ...]:
    """The bindings that make the first tensor-valued name of `expr` a tensor, newest first."""
    function = analysis.function
    if function is None:
        return ()
    name = _tensor_name(expr, analysis, exclude=None)
    if name is None:
        return ()
    steps: list[RelatedLocation] = []
    line = getattr(expr, "lineno", 0)
    seen: set[tuple[str, int]] = set()
    while name is not None and len(steps) < _MAX_STEPS and (name, line) not in seen:
        seen.add((name, line))
        binding = _last_binding(analysis, name, line)
        if binding is None:
            parameter = _parameter(function.node, name)
            if parameter is not None:
                annotation = (
                    f" (annotated `{_short(ast.unparse(parameter.annotation))}`)" if parameter.annotation else ""
                )
                steps.append(
                    RelatedLocation(
                        source.node_range(parameter),
                        f"`{name}`: a parameter of `{function.qualname}`{annotation}",
                        kind="value",
                    )
                )
            break
        statement, value, element = binding
        shown = f"an element of `{_short(ast.unparse(value))}`" if element else f"`{_short(ast.unparse(value))}`"
        steps.append(RelatedLocation(source.node_range(statement), f"`{name}` ← {shown}", kind="value"))
        line = statement.lineno
        name = _tensor_name(value, analysis, exclude=None)
    return tuple(steps)


def _tensor_name(expr: ast.AST, analysis: FunctionAnalysis, exclude: str | None) -> str | None:
    for node in walk(expr):
        if isinstance(node, ast.Name) and node.id != exclude and analysis.kind(node) in _TRACED:
            return node.id
    return None


def _last_binding(analysis: FunctionAnalysis, name: str, before: int) -> tuple[ast.stmt, ast.expr, bool] | None:
    """The last statement before line `before` that binds `name`, the value it binds, and whether
    the name takes the value's elements (a loop target)."""
    found: tuple[ast.stmt, ast.expr, bool] | None = None
    for node in analysis.module.regions.bindings(analysis.function):  # type: ignore[arg-type]
        if node.lineno >= before:
            continue
        binding: tuple[ast.stmt, ast.expr, bool]
        if isinstance(node, ast.Assign) and any(name in bound_names(t) for t in node.targets):
            binding = (node, node.value, False)
        elif (
            isinstance(node, (ast.AnnAssign, ast.AugAssign))
            and name in bound_names(node.target)
            and node.value is not None
        ):
            binding = (node, node.value, False)
        elif isinstance(node, (ast.For, ast.AsyncFor)) and name in bound_names(node.target):
            binding = (node, node.iter, True)
        else:
            continue
        if found is None or node.lineno >= found[0].lineno:
            found = binding
    return found


def _parameter(function: ast.AST, name: str) -> ast.arg | None:
    args = function.args  # type: ignore[attr-defined]
    return next((a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == name), None)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"
