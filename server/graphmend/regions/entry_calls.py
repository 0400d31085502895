"""The calls of this file that run a compiled function as the compiled frame: `step(x, n)` of a
function decorated `@torch.compile`, `fast(x, n)` where `fast = torch.compile(step)`,
`torch.compile(step)(x, n)`, and `model(x, n)` where `model = torch.compile(Model())`. What they pass is what Dynamo receives as the frame's inputs (a tensor
passed for `n` is a tensor in the frame: `x[:n]` breaks, gb0124, measured on torch 2.13)."""

from __future__ import annotations

import ast

from ..semantics import FunctionInfo, ModuleIndex, binding_scope
from .records import Entry
from .resolution import CallResolution
from .scope_facts import ScopeFacts

Caller = FunctionInfo | None  # None: the module's own body


class EntryCalls:
    """For each compiled function, and each module compiled by a call (`torch.compile(Model())`: its
    `forward`, the instance passed as `self`), the calls of this file that run it, with the scope
    that makes each. Not a compiled method: its callers reach it through an instance."""

    def __init__(self, index: ModuleIndex, facts: ScopeFacts, resolution: CallResolution, entries: list[Entry]) -> None:
        self.index = index
        self.facts = facts
        self.resolution = resolution
        self.entries = [e for e in entries if e.function.owner is None or _bound_method(e.site, index)]
        self._calls: dict[int, list[tuple[Caller, ast.Call]]] | None = None

    def of(self, function: FunctionInfo) -> list[tuple[Caller, ast.Call]]:
        """The calls that run `function` as a compiled frame ([] for one no compile site names)."""
        if self._calls is None:
            self._calls = self._find() if self.entries else {}
        return self._calls.get(id(function.node), [])

    def _find(self) -> dict[int, list[tuple[Caller, ast.Call]]]:
        decorated = {id(e.function.node): e.function for e in self.entries if e.site in e.function.node.decorator_list}
        sites = {id(e.site): e.function for e in self.entries if isinstance(e.site, ast.Call)}
        scopes: list[Caller] = [None, *self.index.all_functions]
        bound: dict[tuple[int, str], FunctionInfo] = {}  # (binding scope, name) → the function it compiles
        for scope in scopes:
            for node in self.facts.assignments(scope):
                if id(node.value) in sites:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            bound[(_key(scope), target.id)] = sites[id(node.value)]
        found: dict[int, list[tuple[Caller, ast.Call]]] = {}
        for scope in scopes:
            for call in self.facts.calls(scope):
                func = call.func
                compiled = sites.get(id(func))  # `torch.compile(step)(x)`
                if compiled is None and isinstance(func, ast.Name):
                    named = self.resolution.resolve_function_name(func.id, scope)
                    compiled = (
                        named
                        if named is not None and id(named.node) in decorated
                        else bound.get((_key(binding_scope(func.id, scope)), func.id))
                    )
                if compiled is not None:
                    found.setdefault(id(compiled.node), []).append((scope, call))
        return found


def _bound_method(site: ast.AST, index: ModuleIndex) -> bool:
    """A compile call whose callable takes `self` from an instance: `torch.compile(Model())`,
    `torch.compile(model.step)`; not `torch.compile(Model.forward)`, whose callers pass it."""
    if not isinstance(site, ast.Call) or not site.args:
        return False
    target = site.args[0]
    return not (
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in index.classes
    )


def _key(scope: Caller) -> int:
    return id(scope.node) if scope is not None else 0
