"""Which values change from one call of compiled code to the next: a Python number the loop
around the call computes anew (its index, a counter, a schedule's rate, `len()` of a growing list),
and what kind of number it is, which decides how often Dynamo compiles again for it."""

from __future__ import annotations

import ast

from .first_values import FirstValues
from .kinds import Change, NumberKinds
from .program import Program, Scope
from .shapes import Shapes
from .syntax import (
    argument_for,
    bound_targets,
    global_names,
    method_calls,
    names_read,
    parameter_position,
    target_names,
)

_GROWS = frozenset({"append", "extend", "insert", "add", "update", "pop", "remove", "clear"})


class Values:
    """Answers "does this value change between iterations" for one program."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.kinds = NumberKinds(program)  # which expressions are Python numbers, of which kind
        self.first = FirstValues(program)  # a number's value at the first call: what its guard names
        self.shapes = Shapes(
            program, self.name_changes, self.kinds.single_values
        )  # tensors whose shape changes between calls

    def changing_number(self, expr: ast.expr, node: ast.AST, depth: int = 2) -> Change | None:
        """How the Python number `expr`, evaluated at `node`, changes between the runs of `node`:
        in a loop around it, or through a parameter of its function that callers pass changing."""
        for loop in reversed([a for a in self.program.ancestors(node) if isinstance(a, (ast.For, ast.While))]):
            found = self._changes_in(expr, loop, self.program.scope_of(node), set())
            if found is not None:
                return found
        scope = self.program.scope_of(node)
        if depth and isinstance(expr, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            position = parameter_position(scope, expr.id)
            if position is not None and not _assigned_in(scope, expr.id):
                for call, _ in self.program.calls_of(scope):
                    passed = argument_for(call, position, expr.id)
                    if passed is not None:
                        found = self.changing_number(passed, call, depth - 1)
                        if found is not None:
                            return found
        return None

    def _changes_in(self, expr: ast.expr, loop: ast.AST, scope: Scope, seen: set[str]) -> Change | None:
        kind = self.kinds.of(expr, scope)
        if kind is None:
            return None
        for name in names_read(expr):
            if name.id in seen:
                continue
            seen.add(name.id)
            found = self.name_changes(name.id, loop, scope, seen)
            if found is not None:
                return Change(kind if kind != "number" else found.kind, found.why, found.line, loop)
        for call in (n for n in ast.walk(expr) if isinstance(n, ast.Call)):
            found = self._call_changes(call, loop)
            if found is not None:
                return Change(kind, found.why, found.line, loop)
        return None

    def name_changes(self, name: str, loop: ast.AST, scope: Scope, seen: set[str]) -> Change | None:
        if isinstance(loop, (ast.For, ast.AsyncFor)) and name in target_names(loop.target):
            kind = self.kinds.target_kind(loop.target, name, loop.iter, scope)
            if kind is not None:
                return Change(kind, f"`{name}` takes the next value of `{ast.unparse(loop.iter)}`", loop.lineno, loop)
        for node in ast.walk(loop):
            if node is loop:
                continue
            if isinstance(node, (ast.For, ast.AsyncFor)) and name in target_names(node.target):
                kind = self.kinds.target_kind(node.target, name, node.iter, scope)
                if kind is not None:
                    return Change(
                        kind, f"`{name}` takes the next value of `{ast.unparse(node.iter)}`", node.lineno, loop
                    )
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                kind = self.kinds.of(node.value, scope) or "number"
                return Change(kind, f"`{ast.unparse(node).strip()}` at line {node.lineno}", node.lineno, loop)
            if isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                kind = self.kinds.of(node.value, scope)
                if kind is None or isinstance(node.value, ast.Constant):
                    continue
                if any(n.id == name for n in names_read(node.value)):  # `eps = max(0.05, eps * 0.9)`: a recurrence
                    return Change(kind, f"`{ast.unparse(node).strip()}` at line {node.lineno}", node.lineno, loop)
                inner = self._changes_in(node.value, loop, scope, seen)
                if inner is not None:
                    return Change(
                        kind, f"`{name}` is set from it at line {node.lineno}: {inner.why}", node.lineno, loop
                    )
        if isinstance(scope, ast.Module) or name in global_names(scope):
            for function in self.program.index.all_functions:  # a function called in the loop changes a global
                if name in global_names(function.node) and self._called_in(function.node.name, loop):
                    for node in ast.walk(function.node):
                        if (
                            isinstance(node, ast.AugAssign)
                            and isinstance(node.target, ast.Name)
                            and node.target.id == name
                        ):
                            why = f"`{function.node.name}` does `{ast.unparse(node).strip()}` (line {node.lineno})"
                            return Change(self.kinds.of(node.value, scope) or "number", why, node.lineno, loop)
        return None

    def _called_in(self, function: str, loop: ast.AST) -> bool:
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == function for n in ast.walk(loop)
        )

    def _call_changes(self, call: ast.Call, loop: ast.AST) -> Change | None:
        """`len(history)` with `history.append(...)` in the loop; `scheduler.get_last_lr()` with
        `scheduler.step()` in it; a same-file function returning a number called with an argument
        that changes (`get_decay(step)`)."""
        qualified = self.program.qualified(call.func) or ""
        if qualified.startswith(("random.", "numpy.random.")) and self.kinds.of(call, self.program.scope_of(call)):
            return Change(
                self.kinds.of(call, self.program.scope_of(call)) or "number",
                f"`{ast.unparse(call)}` draws a new value",
                call.lineno,
                loop,
            )
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.program.index.functions:
            scope = self.program.scope_of(call)
            for argument in call.args:
                found = self._changes_in(argument, loop, scope, set())
                if found is not None:
                    return Change("number", f"`{ast.unparse(call)}` is called with {found.why}", found.line, loop)
        if isinstance(func, ast.Name) and func.id == "len" and call.args and isinstance(call.args[0], ast.Name):
            grown = call.args[0].id
            growth = next((node for node, receiver in method_calls(loop, *_GROWS) if receiver == grown), None)
            if growth is not None:
                method = growth.func.attr  # type: ignore[attr-defined]
                why = f"`{grown}.{method}(...)` at line {growth.lineno} changes its length"
                return Change("int", why, growth.lineno, loop)
        if isinstance(func, ast.Attribute) and func.attr == "get_last_lr" and isinstance(func.value, ast.Name):
            stepped = _stepped(func.value.id, loop)
            if stepped is not None:
                return Change(
                    "float", f"`{func.value.id}.step()` at line {stepped.lineno} changes the rate", stepped.lineno, loop
                )
        return None


def _stepped(name: str, loop: ast.AST) -> ast.Call | None:
    return next((call for call, receiver in method_calls(loop, "step") if receiver == name), None)


def _assigned_in(function: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and name in bound_targets(n)
        for n in ast.walk(function)
    )
