"""What a module's top level tells Dynamo about messages: the functions it adds to, or takes out of,
Dynamo's replayed set (`reorderable_logging_functions`: calls recorded and replayed after the
graph) and its dropped set (`ignore_logging_functions`: calls left out).

Read by what is compiled (a registered function's body is never traced), by the message rules
(a registered print breaks with another reason), and by the rewrites' helpers (a helper that is
registered stays registered). Found once per module, in the order its statements run."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from .semantics import ModuleIndex, once_per_module
from .torch_api import DROPPED_MESSAGE_SETS, REPLAYED_MESSAGE_SETS


@dataclass(frozen=True)
class SetChange:
    """One top-level statement that changes one of Dynamo's message sets."""

    statement: ast.stmt
    kind: str  # "replayed" or "dropped"
    operation: str  # "add", "remove" or "replace"
    members: list[ast.expr]  # the functions it names


class MessageSets:
    """The message sets of one module (`message_sets` finds them once per module)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index

    @cached_property
    def deferred_registrations(self) -> dict[str, ast.stmt]:
        """Names the module's top level adds to the replayed set: name → the last statement adding
        it. Whether it is still there at the end: `registered`."""
        return {
            member.id: change.statement
            for change in self.changes
            if change.kind == "replayed" and change.operation == "add"
            for member in change.members
            if isinstance(member, ast.Name)
        }

    @cached_property
    def registered(self) -> dict[str, frozenset[str]]:
        """The functions the module's top level leaves in Dynamo's sets (`REPLAYED_MESSAGE_SETS`:
        "replayed", `DROPPED_MESSAGE_SETS`: "dropped"), its statements taken in order: `.add(f)`,
        `.update({...})` and `|= {...}` add; `.discard(f)`, `.remove(f)` and `-= {...}` take out;
        `.clear()` empties; `= {...}` replaces. Each is a qualified name (`builtins.print`,
        `warnings.warn`, `logging.Logger.info`: every logger's), a module-level receiver and method
        (`logger.debug`: that logger's), or the name of a function of the module."""
        found: dict[str, set[str]] = {"replayed": set(), "dropped": set()}
        for change in self.changes:
            functions = set(filter(None, map(self.function_name, change.members)))
            if change.operation == "replace":
                found[change.kind] = functions
            elif change.operation == "add":
                found[change.kind] |= functions
            else:
                found[change.kind] -= functions
        return {kind: frozenset(names) for kind, names in found.items()}

    @cached_property
    def replayed_resets(self) -> list[ast.stmt]:
        """The top-level statements that take functions out of the replayed set (`.discard`,
        `.remove`, `-=`, `.clear()`, `= {...}`): a function registered before one may not stay registered."""
        return [c.statement for c in self.changes if c.kind == "replayed" and c.operation != "add"]

    @cached_property
    def changes(self) -> list[SetChange]:
        """Each top-level statement that changes one of Dynamo's message sets, in order."""
        found = []
        for stmt in self.index.tree.body:
            registry, operation, members = self._registration(stmt)
            if registry in REPLAYED_MESSAGE_SETS:
                found.append(SetChange(stmt, "replayed", operation, members))
            elif registry in DROPPED_MESSAGE_SETS:
                found.append(SetChange(stmt, "dropped", operation, members))
        return found

    def _registration(self, stmt: ast.stmt) -> tuple[str | None, str, list[ast.expr]]:
        """The set a top-level statement changes (its qualified name), how ("add", "remove",
        "replace") and the functions it names."""
        qualified_name = self.index.qualified_name
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if isinstance(call.func, ast.Attribute):
                registry = qualified_name(call.func.value)
                method = call.func.attr
                if method in ("add", "discard", "remove"):
                    return registry, "add" if method == "add" else "remove", call.args[:1]
                if method == "update":
                    return registry, "add", _elements(call.args)
                if method == "clear":
                    return registry, "replace", []
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            return qualified_name(stmt.targets[0]), "replace", _elements([stmt.value])
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, (ast.BitOr, ast.Sub)):
            operation = "add" if isinstance(stmt.op, ast.BitOr) else "remove"
            return qualified_name(stmt.target), operation, _elements([stmt.value])
        return None, "add", []

    def function_name(self, expr: ast.expr) -> str | None:
        """How a member of a message set is named in `registered` (`builtins.print`, `warnings.warn`,
        `logging.Logger.info`, `logger.debug`, a function of the module); None for anything else."""
        index = self.index
        if isinstance(expr, ast.Name) and expr.id == "print" and index.is_builtin("print", frozenset()):
            return "builtins.print"
        if isinstance(expr, ast.Name) and expr.id in index.functions:
            return expr.id
        qualname = index.qualified_name(expr)
        if qualname is not None:
            return qualname
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            return f"{expr.value.id}.{expr.attr}"
        return None


@once_per_module  # asked for by what is compiled, the rules and the rewrites of the same module
def message_sets(index: ModuleIndex) -> MessageSets:
    return MessageSets(index)


def _elements(values: list[ast.expr]) -> list[ast.expr]:
    """The members of set, list and tuple displays (`{print, warnings.warn}`)."""
    return [e for v in values if isinstance(v, (ast.Set, ast.List, ast.Tuple)) for e in v.elts]
