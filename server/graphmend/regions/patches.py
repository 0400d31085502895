"""What a config patch sets for the compiles in its scope (`torch._dynamo.config.patch(...)` as a
decorator, a wrapper or a `with` block; `torch.compiler.config.patch`; `unittest.mock.patch.object`
on the config): capture settings, and the message sets Dynamo replays or drops (issue 56)."""

from __future__ import annotations

import ast

from ..message_sets import message_sets
from ..semantics import FunctionInfo, ModuleIndex, walk
from .records import CAPTURE_SETTINGS, CONFIGS, MESSAGE_SETTINGS


def patched_settings(index: ModuleIndex, expr: ast.expr, scope: FunctionInfo | None) -> frozenset[str]:
    """What a config patch sets for the compiles in its scope: `torch._dynamo.config.patch(
    capture_scalar_outputs=True)` → {"capture_scalar_outputs"}; a message set
    (`reorderable_logging_functions={print}`, also `torch.compiler.config.patch`,
    `unittest.mock.patch.object(torch._dynamo.config, "ignore_logger_methods", {...})`) → its
    members as "replayed:builtins.print" or "dropped:..."."""
    if not isinstance(expr, ast.Call):
        return frozenset()
    shadowed = scope.local_names if scope else frozenset()
    qualified = index.qualified_name(expr.func, shadowed)
    settings: list[tuple[str | None, ast.expr]] = []
    if qualified is not None and qualified.rpartition(".")[0] in CONFIGS and qualified.endswith(".patch"):
        settings = [(k.arg, k.value) for k in expr.keywords]
        if len(expr.args) == 2 and isinstance(expr.args[0], ast.Constant):  # `patch("name", value)`
            settings.append((str(expr.args[0].value), expr.args[1]))
    elif qualified == "unittest.mock.patch.object" and len(expr.args) == 3 and isinstance(expr.args[1], ast.Constant):
        if index.qualified_name(expr.args[0], shadowed) in CONFIGS:
            settings = [(str(expr.args[1].value), expr.args[2])]
    found = set()
    sets = message_sets(index)
    for name, value in settings:
        if name in CAPTURE_SETTINGS and isinstance(value, ast.Constant) and value.value is True:
            found.add(name)
        elif name in MESSAGE_SETTINGS and isinstance(value, (ast.Set, ast.List, ast.Tuple)):
            members = filter(None, map(sets.function_name, value.elts))
            found |= {f"{MESSAGE_SETTINGS[name]}:{member}" for member in members}
    return frozenset(found)


def with_patches(index: ModuleIndex, compile_lines: list[int] | None) -> dict[int, frozenset[str]]:
    """Every call inside a `with <config patch>:` block → what the patch sets: a compile there
    compiles under it (only files with a compile site are searched)."""
    found: dict[int, frozenset[str]] = {}
    if not compile_lines and compile_lines is not None:
        return found
    for node in walk(index.tree):
        if not isinstance(node, (ast.With, ast.AsyncWith)):
            continue
        scope = _scope_at(index, node)
        settings = frozenset().union(*(patched_settings(index, item.context_expr, scope) for item in node.items))
        if settings:
            for inner in (n for statement in node.body for n in walk(statement) if isinstance(n, ast.Call)):
                found[id(inner)] = found.get(id(inner), frozenset()) | settings
    return found


def _scope_at(index: ModuleIndex, node: ast.AST) -> FunctionInfo | None:
    """The innermost function whose span holds `node` (None: the module)."""
    line = getattr(node, "lineno", 0)
    holding = [f for f in index.all_functions if f.node.lineno <= line <= (f.node.end_lineno or f.node.lineno)]
    return max(holding, key=lambda f: f.node.lineno, default=None)
