"""Small facts of Python syntax the recompile analyses share: the names a target binds, the
names an expression reads, a function's parameters."""

from __future__ import annotations

import ast


def names_read(expr: ast.expr) -> list[ast.Name]:
    return [n for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def target_names(target: ast.expr) -> set[str]:
    """The names an assignment target binds (`a, b`), not those it reads (`results[(a, b)]`)."""
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def bound_by(node: ast.AST) -> set[str]:
    target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
    return target_names(target) if isinstance(target, ast.expr) else set()


def global_names(scope: ast.AST) -> set[str]:
    return {name for n in ast.walk(scope) if isinstance(n, ast.Global) for name in n.names}


def all_args(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def bound_targets(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {name for t in targets for name in target_names(t)}


def bound_targets_of(node: ast.Assign | ast.AugAssign | ast.For) -> set[str]:
    if isinstance(node, ast.For):
        return target_names(node.target)
    return bound_targets(node)


def method_calls(tree: ast.AST, *methods: str) -> list[tuple[ast.Call, str]]:
    """The calls `<name>.<method>(...)` of any of `methods` in `tree`, with the name they are made
    on (`scheduler.step()`, `history.append(x)`)."""
    return [
        (node, node.func.value.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
        and isinstance(node.func.value, ast.Name)
    ]


def parameter_position(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> int | None:
    """Where a parameter is passed by position; -1 for a keyword-only one, None for no parameter."""
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if name in positional:
        return positional.index(name)
    return -1 if name in {a.arg for a in function.args.kwonlyargs} else None


def argument_for(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """The argument a call passes for a parameter (by position, or by keyword)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if 0 <= position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None
