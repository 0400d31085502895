"""The module-level helpers a message fix adds to the user's file: each defined once, after what it
needs, reused by a second fix of the same file, and named so that it collides with nothing there.

A deferred helper is disabled for Dynamo and registered in `reorderable_logging_functions`
(`deferral`); an in-graph helper is an operator that keeps messages in order (`in_graph`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from ..diagnostics import TextEdit
from ..message_sets import message_sets
from ..semantics import walk
from ..source import Position, Range
from ..torch_api import DISABLE_DECORATORS
from .base import FixContext

DOCSTRING = "torch.compile runs this after its graph instead of breaking the graph for it."
# The public name of Dynamo's registry of deferred functions exists from torch 2.10 (read from the
# released wheels); older releases have only the private one.
PUBLIC_REGISTRY_RELEASE = (2, 10)
LEVEL = "\t"  # leading a line of a helper's body: one more level, written in the file's own indentation


# What a helper is, which decides how it is written and how an existing one is recognised.
DEFERRED, OPERATOR, PLAIN = "deferred", "operator", "plain"
OPERATOR_DOCSTRING = "torch.compile keeps this call in its graph, in order, instead of breaking the graph for it."


@dataclass(frozen=True)
class Helper:
    """A module-level function a fix adds: `DEFERRED` (disabled for Dynamo, registered as replayed
    after the graph), `OPERATOR` (made an operator that keeps messages in order by the file's `wrapper`,
    itself a `PLAIN` helper) or `PLAIN`."""

    name: str
    parameters: str
    body: str
    kind: str = DEFERRED
    returns: str = ""  # the return annotation, e.g. " -> None"
    docstring: str = DOCSTRING


def needed(helper: Helper, torch_name: str) -> set[str]:
    """Module-level names a helper needs when it is defined, registered or called."""
    return {torch_name} | free_names(helper.parameters, helper.body)


@lru_cache(maxsize=256)
def free_names(parameters: str, helper_body: str) -> frozenset[str]:
    """The names a helper reads but does not bind itself: its parameters and its own locals (the
    wrapper's `run`, `call`, `name`) are no reason to place it after a module-level `run` or `name`."""
    function = ast.parse(f"def _helper({parameters}):\n{indented(helper_body, '    ', 1)}").body[0]
    bound: set[str] = set()
    read: set[str] = set()
    for node in walk(function):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return frozenset(read - bound)


def indented(helper_body: str, unit: str, depth: int) -> str:
    """A helper's body with each `LEVEL` mark written as one `unit` of indentation, `depth` units in."""
    return "\n".join(
        unit * (depth + len(line) - len(line.lstrip(LEVEL))) + line.lstrip(LEVEL) if line else ""
        for line in helper_body.split("\n")
    )


def resolved(helper: Helper, ctx: FixContext, wrapper: str | None = None) -> tuple[str, bool]:
    """The name the helper gets, and whether the file already defines it: its own name, unless the
    file uses that name for something else (then `_2`, `_3`...); a function that already is this
    helper keeps it."""
    existing = ctx.top_level_functions
    body = indented(helper.body, ctx.indent_unit, 1)
    name = helper.name
    number = 1
    while name in existing or ctx.file_has_word(name):
        current = existing.get(name)
        code = f"def {name}({helper.parameters}){helper.returns}:\n{body}"
        if current is not None and _defines(current, code, helper.kind, wrapper, ctx):
            return name, True
        number += 1
        name = f"{helper.name}_{number}"
    return name, False


def helper_edit(
    helper: Helper, ctx: FixContext, torch_name: str, wrapper: str | None = None
) -> tuple[str, TextEdit | None]:
    """The helper's name, and the edit that defines it (None when the file already has it); an
    `OPERATOR` helper is made an operator by `wrapper`, the name of the file's `PLAIN` wrapper."""
    name, defined = resolved(helper, ctx, wrapper)
    if defined:
        return name, None
    unit = ctx.indent_unit
    body = indented(helper.body, unit, 1)
    function = f'def {name}({helper.parameters}){helper.returns}:\n{unit}"""{helper.docstring}"""\n{body}'
    if helper.kind == DEFERRED:
        # Disabled for Dynamo: when the call is replayed after the graph, Dynamo must not try to
        # compile the helper's own frame (that would log a break on the print inside it).
        code = f"\n\n\n@{torch_name}.compiler.disable\n{function}\n\n\n{registry(ctx, torch_name)}.add({name})"
    elif helper.kind == OPERATOR:
        code = f"\n\n\n{function}\n\n\n{name} = {wrapper}({name})"
    else:
        code = f"\n\n\n{function}"
    names = needed(helper, torch_name) | ({wrapper} if wrapper is not None else set())
    end = _end(ctx, anchor(ctx, names))
    following = ctx.source.lines[end.line + 1] if end.line + 1 < len(ctx.source.lines) else ""
    if following.strip():
        code += "\n"  # keep a blank line between the registration and the next statement
    return name, TextEdit(Range(end, end), code)


def _defines(
    function: ast.FunctionDef | ast.AsyncFunctionDef, code: str, kind: str, wrapper: str | None, ctx: FixContext
) -> bool:
    """Whether `function` is the helper `code` defines: the same parameters and body (a docstring
    aside); a deferred one disabled for Dynamo and registered as deferred, an operator one made an
    operator by `wrapper` at module level. Fixing a fixed file again reuses its helpers; a plain
    function of the same name and body is not one (Dynamo would trace it)."""
    wanted = ast.parse(code).body[0]
    assert isinstance(wanted, ast.FunctionDef)
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    same = ast.dump(function.args) == ast.dump(wanted.args) and [ast.dump(s) for s in body] == [
        ast.dump(s) for s in wanted.body
    ]
    if kind == PLAIN or not same:
        return same
    if kind == OPERATOR:
        return any(_wraps(stmt, function.name, wrapper) for stmt in ctx.index.tree.body)
    disabled = any(ctx.index.qualified_name(d) in DISABLE_DECORATORS for d in function.decorator_list)
    return disabled and function.name in message_sets(ctx.index).registered["replayed"]


def _wraps(stmt: ast.stmt, name: str, wrapper: str | None) -> bool:
    """`name = wrapper(name)`."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Name)
        and stmt.value.func.id == wrapper
        and len(stmt.value.args) == 1
        and isinstance(stmt.value.args[0], ast.Name)
        and stmt.value.args[0].id == name
    )


def registry(ctx: FixContext, torch_name: str) -> str:
    """Dynamo's set of deferred functions under its public name where the code's torch is known to
    have it (2.10 and later), else under the private one, the same set on every release: a name the
    torch lacks would fail when the user's module is imported."""
    version = ctx.torch_version
    config = "compiler" if version is not None and version >= PUBLIC_REGISTRY_RELEASE else "_dynamo"
    return f"{torch_name}.{config}.config.reorderable_logging_functions"


def anchor(ctx: FixContext, needed: set[str]) -> ast.stmt:
    """The top-level statement after which the helper goes: after the leading docstring/imports,
    after every top-level statement that binds a name the helper needs when it is defined or
    registered (torch) or called (the logger, `sys`, `warnings`), and after every one that takes
    functions out of Dynamo's replayed set."""
    body = ctx.index.tree.body
    last = body[0]
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt is body[0]
        ):
            last = stmt
        else:
            break
    for name in needed:  # and after a registered function's registration, which calls it as deferred
        for binding in (ctx.top_level_bindings.get(name), message_sets(ctx.index).deferred_registrations.get(name)):
            if binding is not None and binding.lineno > last.lineno:
                last = binding
    for reset in message_sets(ctx.index).replayed_resets:  # and after what empties the set: the helper stays in it
        if reset.lineno > last.lineno:
            last = reset
    return last


def _end(ctx: FixContext, stmt: ast.stmt) -> Position:
    end_line = stmt.end_lineno or stmt.lineno
    return Position(end_line - 1, len(ctx.source.lines[end_line - 1]))
