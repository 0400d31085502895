"""The calls and bindings of one scope's own body (not of nested scopes), collected in one walk
per scope: compile sites, instance tracking, the call graph and the rules all read them."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..semantics import FunctionInfo, ModuleIndex, child_nodes

UNKNOWN_VALUE = ast.Constant(value=None)  # `assigned_values`: a value bound other than by `name = value`


def bound_names(target: ast.AST) -> Iterator[str]:
    return (n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


_BINDINGS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _walk_no_scopes(nodes: list[ast.stmt] | list[ast.AST]) -> Iterator[ast.AST]:
    """All nodes below `nodes` (in no particular order), not descending into nested functions,
    classes or lambdas."""
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(child_nodes(node))


class ScopeFacts:
    """Per-scope calls, assignments and bindings of one module, cached by the scope's node."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._call_cache: dict[int, tuple[list[ast.Call], list[ast.Assign]]] = {}
        self._binding_cache: dict[int, list[ast.stmt | ast.expr]] = {}
        self._values_cache: dict[int, dict[str, list[ast.expr]]] = {}

    def calls(self, function: FunctionInfo | None) -> list[ast.Call]:
        """The calls in a scope's own body (not in nested scopes; None: the module's): entries,
        instance tracking and the call graph all need them, so one walk per scope collects calls
        and assignments."""
        return self._facts(function)[0]

    def assignments(self, function: FunctionInfo | None) -> list[ast.Assign]:
        """The assignments of a call's value (`x = f(...)`) in a scope's own body, in source order."""
        return self._facts(function)[1]

    def _facts(self, function: FunctionInfo | None) -> tuple[list[ast.Call], list[ast.Assign]]:
        key = id(function.node) if function else 0
        if key not in self._call_cache:
            calls: list[ast.Call] = []
            assignments: list[ast.Assign] = []
            bindings: list[ast.stmt | ast.expr] = []
            for node in _walk_no_scopes(function.node.body if function else self.index.tree.body):
                if isinstance(node, ast.Call):
                    calls.append(node)
                elif isinstance(node, _BINDINGS):
                    bindings.append(node)
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                        assignments.append(node)
            self._call_cache[key] = (calls, sorted(assignments, key=lambda a: (a.lineno, a.col_offset)))
            self._binding_cache[key] = bindings
        return self._call_cache[key]

    def nodes(self, function: FunctionInfo) -> Iterator[ast.AST]:
        """Every node of a function's own body (not of nested scopes), walked anew: few callers ask."""
        return _walk_no_scopes(function.node.body)

    def bindings(self, function: FunctionInfo | None) -> list[ast.stmt | ast.expr]:
        """The statements (and walrus expressions) that bind names in a scope's own body (None: the module's)."""
        self._facts(function)
        return self._binding_cache[id(function.node) if function else 0]

    def assigned_values(self, function: FunctionInfo | None) -> dict[str, list[ast.expr]]:
        """name → the values `name = value` gives it in a scope's own body (None: the module's); a
        binding of another form (unpacking, `for`, `with`, `+=`, `:=`) counts as `UNKNOWN_VALUE`."""
        key = id(function.node) if function else 0
        if key not in self._values_cache:
            found: dict[str, list[ast.expr]] = {}
            for node in self.bindings(function):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, []).append(node.value)
                        else:
                            for name in bound_names(target):
                                found.setdefault(name, []).append(UNKNOWN_VALUE)
                else:
                    targets = (
                        [i.optional_vars for i in node.items if i.optional_vars]
                        if isinstance(node, (ast.With, ast.AsyncWith))
                        else [node.target]  # type: ignore[union-attr]
                    )
                    for name in (n for t in targets for n in bound_names(t)):
                        found.setdefault(name, []).append(UNKNOWN_VALUE)
            self._values_cache[key] = found
        return self._values_cache[key]


def assigned_value(node: ast.Assign, name: str) -> ast.expr | None:
    """The value an assignment that binds `name` gives it: its whole value, or its element of a tuple
    written out; None for any other unpacking."""
    for target in node.targets:
        if isinstance(target, ast.Name) and target.id == name:
            return node.value
        if isinstance(target, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == name for e in target.elts):
            value = node.value
            if not isinstance(value, ast.Tuple) or len(value.elts) != len(target.elts):
                return None
            return next(v for e, v in zip(target.elts, value.elts) if isinstance(e, ast.Name) and e.id == name)
    return None
