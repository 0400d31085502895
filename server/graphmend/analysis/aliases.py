"""Which tensors of a function may share memory, and where one of them is written.

A deferred message formats its tensors after the graph has run, so a write to the same memory
between the message and the end of the graph shows the later value. The write need not use the
printed name: `y = x.view(-1); print(x); y.add_(1)` changes `x` too. Names are grouped by the
assignments that may bind a view (`y = x[0]`, `y = x.t()`, `a, b = x.chunk(2)`, `y = x`, `for r in
x`, `y = x.to(device)` which returns `x` itself when nothing changes): every name in a group may
alias every other. Calls of other functions are taken to return new tensors; writes made by
called functions are not seen (a module's `forward` rarely writes its input).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..inference import FunctionAnalysis
from ..semantics import walk
from ..torch_api import VIEW_METHODS
from .liveness import target_names
from .purity import dotted

# Methods that may return the tensor itself (no copy when the dtype or device already match).
_MAY_RETURN_SELF = frozenset("to type type_as contiguous float double half bfloat16 int long bool cpu cuda".split())


def memory_sources(expr: ast.expr, analysis: FunctionAnalysis, elements_are_new: bool = False) -> set[str]:
    """The names whose memory `expr` may share. With `elements_are_new`, an item of a value not
    known to be a tensor (`outputs[0]` of a layer's tuple) is its own object, as a call's result is."""
    if isinstance(expr, (ast.Name, ast.Attribute)) and dotted(expr) is not None:
        if isinstance(expr, ast.Attribute) and expr.attr in VIEW_METHODS:
            return memory_sources(expr.value, analysis, elements_are_new) | {dotted(expr) or ""}
        return {dotted(expr) or ""}
    if isinstance(expr, ast.Attribute) and expr.attr in VIEW_METHODS:  # `(x + 1).T`: a view of a new tensor
        return memory_sources(expr.value, analysis, elements_are_new)
    if isinstance(expr, ast.Subscript):
        if elements_are_new and not analysis.used_as_tensor(expr.value):
            return set()
        return memory_sources(expr.value, analysis, elements_are_new)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if _is_torch_function(expr.func, analysis):  # `torch.transpose(x, 0, 1)`
            return memory_sources(expr.args[0], analysis) if expr.args and expr.func.attr in VIEW_METHODS else set()
        if expr.func.attr in VIEW_METHODS or expr.func.attr in _MAY_RETURN_SELF:
            return memory_sources(expr.func.value, analysis)
    if isinstance(expr, ast.IfExp):
        return memory_sources(expr.body, analysis) | memory_sources(expr.orelse, analysis)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return {name for element in expr.elts for name in memory_sources(element, analysis)}
    if isinstance(expr, ast.NamedExpr):
        return memory_sources(expr.value, analysis)
    return set()


def _bindings(
    function: ast.AST, analysis: FunctionAnalysis, elements_are_new: bool, lines: tuple[int, int] | None
) -> Iterator[tuple[list[str], set[str]]]:
    """(names bound, names whose memory they may share) for each binding in `function` (only those
    on `lines`, first to last, when given)."""
    for node in walk(function):
        if lines is not None and not lines[0] <= getattr(node, "lineno", 0) <= lines[1]:
            continue
        if isinstance(node, ast.Assign):
            sources = memory_sources(node.value, analysis, elements_are_new)
            for target in node.targets:
                yield [*target_names(target), *(d for d in [dotted(target)] if d and "." in d)], sources
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            yield target_names(node.target), memory_sources(node.value, analysis, elements_are_new)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            yield target_names(node.target), memory_sources(node.iter, analysis, elements_are_new)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    yield (
                        target_names(item.optional_vars),
                        memory_sources(item.context_expr, analysis, elements_are_new),
                    )


def alias_group(
    function: ast.AST,
    names: set[str],
    analysis: FunctionAnalysis,
    elements_are_new: bool = False,
    lines: tuple[int, int] | None = None,
) -> set[str]:
    """`names` and every name that may share memory with one of them in `function`, through the
    bindings on `lines` when given (those between a value's making and its use)."""
    pairs = [  # `_` is a throwaway target: it links nothing (`b, s, _ = x.shape` and `_, y = x.chunk(2)`)
        (set(bound) - {"_"}, sources)
        for bound, sources in _bindings(function, analysis, elements_are_new, lines)
        if sources
    ]
    group = set(names)
    changed = True
    while changed:
        changed = False
        for bound, sources in pairs:
            if (bound & group or sources & group) and not (bound | sources) <= group:
                group |= bound | sources
                changed = True
    return group


def _is_torch_function(func: ast.expr, analysis: FunctionAnalysis) -> bool:
    qualname = analysis.qualified_name(func)
    return qualname is not None and qualname.startswith("torch.")


def _written(node: ast.AST, group: set[str], analysis: FunctionAnalysis) -> str | None:
    """The name of `group` that `node` writes in place, if it does."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            if _is_torch_function(func, analysis):  # `torch.clamp_(x)`, `nn.init.zeros_(w)`
                written = memory_sources(node.args[0], analysis) & group if node.args else set()
            else:
                written = memory_sources(func.value, analysis) & group
            if written:
                return sorted(written)[0]
        for keyword in node.keywords:
            if keyword.arg == "out":
                written = memory_sources(keyword.value, analysis) & group
                if written:
                    return sorted(written)[0]
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (ast.Subscript, ast.Attribute)) or isinstance(node, ast.AugAssign):
                # `x[i] = v`, `x.data = v`, `x += v` (in place for a tensor)
                base = target.value if isinstance(target, ast.Subscript) else target
                if isinstance(target, ast.Attribute) and target.attr not in ("data", "real", "imag"):
                    continue
                written = memory_sources(base, analysis) & group
                if written:
                    return sorted(written)[0]
    return None


def loop_nodes(function: ast.AST, node: ast.AST) -> set[int]:
    """The ids of the nodes of every loop around `node`: they run again after it."""
    again: set[int] = set()
    for loop in walk(function):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) and any(n is node for n in walk(loop)):
            again |= {id(n) for n in walk(loop)}
    return again


def written_after(
    function: ast.AST, node: ast.expr | ast.stmt, names: set[str], analysis: FunctionAnalysis
) -> str | None:
    """A name that may share memory with `names` and is written in place after `node` — or
    anywhere in a loop around it, which runs again after it — else None."""
    group = alias_group(function, names, analysis)
    end_line = node.end_lineno or node.lineno
    again = loop_nodes(function, node)
    for candidate in walk(function):
        if getattr(candidate, "lineno", 0) > end_line or id(candidate) in again:
            written = _written(candidate, group, analysis)
            if written is not None:
                return written
    return None
