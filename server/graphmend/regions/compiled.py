"""`CompiledRegions`: the compiled entries of a module and every same-file function they reach,
with the chain that reaches it (Dynamo traces into each function a compiled frame calls, so a
break inside a helper is a break of the entry)."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from ..semantics import ClassInfo, FunctionInfo, ModuleIndex
from .entries import EntryFinder
from .records import ExternalRef, ProjectContext, Reach


class CompiledRegions(EntryFinder):
    """Finds compiled entries of a module and the functions reachable from them."""

    def __init__(
        self,
        index: ModuleIndex,
        module_forward_is_compiled: bool = True,
        context: ProjectContext | None = None,
        compile_lines: list[int] | None = None,
        callees: Callable[[CompiledRegions, FunctionInfo], list[FunctionInfo]] | None = None,
    ) -> None:
        self.index = index
        self.module_forward_is_compiled = module_forward_is_compiled
        self.context = context or ProjectContext()
        self.compile_lines = compile_lines
        # How the call graph is read (`units.EdgeCache` reuses the edges of unchanged units).
        self._callees = callees or (lambda regions, function: list(regions.own_callees(function)))
        self._instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._attribute_instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._sequence_attributes: dict[int, dict[str, list[ClassInfo | str]]] = {}
        self._attribute_functions: dict[int, dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]] = {}
        self._call_cache: dict[int, tuple[list[ast.Call], list[ast.Assign]]] = {}
        self._binding_cache: dict[int, list[ast.stmt | ast.expr]] = {}
        self._values_cache: dict[int, dict[str, list[ast.expr]]] = {}
        self.remote_entries: list[tuple[ExternalRef, str, ast.AST]] = []
        self.replayed = self._reorderable_functions()
        self.entries = self._find_entries()
        self.reached = self._reach()

    def _reach(self) -> dict[int, Reach]:
        reached: dict[int, Reach] = {}
        queue: deque[Reach] = deque()
        for entry in self.entries:
            reach = Reach(entry, (entry.function,))
            reached[id(entry.function.node)] = reach
            queue.append(reach)
        while queue:
            reach = queue.popleft()
            current = reach.chain[-1]
            for callee in self.callees(current):
                if id(callee.node) not in reached and id(callee.node) not in self.replayed:
                    nxt = Reach(reach.entry, (*reach.chain, callee))
                    reached[id(callee.node)] = nxt
                    queue.append(nxt)
        return reached

    def callees(self, function: FunctionInfo) -> list[FunctionInfo]:
        """The same-file functions `function` calls (`self.block(x)` counts as `Block.forward`)."""
        return self._callees(self, function)

    def calls_in(self, function: FunctionInfo) -> list[ast.Call]:
        """The calls in the function's own body (not in nested functions)."""
        return self._calls(function)

    def same_file_calls(self, function: FunctionInfo) -> Iterator[tuple[ast.Call, FunctionInfo]]:
        """Each call in `function`'s own body with each same-file function it may run."""
        for node in self._calls(function):
            for target in (self._same_file_targets(node, function) or ((), None))[0]:
                yield node, target

    def own_callees(self, function: FunctionInfo) -> Iterator[FunctionInfo]:
        """`callees`, found by walking the function."""
        for node in self._calls(function):
            yield from (self._same_file_targets(node, function) or ((), None))[0]

    def _same_file_targets(
        self, call: ast.Call, scope: FunctionInfo
    ) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What a call runs when this file says: the function or module `forward` it resolves to,
        or the functions `self.fn(...)` is bound to (with the imported table or function, if so)."""
        callee = self.resolve_call(call, scope) or self.module_call_target(call, scope)
        if callee is not None:
            return (callee, *self._overrides(call, scope, callee)), None
        return self.attribute_functions(call, scope)

    def _overrides(self, call: ast.Call, scope: FunctionInfo, callee: FunctionInfo) -> tuple[FunctionInfo, ...]:
        """`self.mine(...)` in a method of `Base` runs the `mine` of the instance's class: for an
        instance of a subclass of this file that overrides it, that override (a base's `forward`
        calling a hook each model defines)."""
        func = call.func
        owner = scope.method.owner if scope.method else None
        if owner is None or not isinstance(func, ast.Attribute) or not scope.is_self(func.value):
            return ()
        found = []
        for cls in self.index.classes.values():
            if cls is owner or not any(base is owner for base in cls.mro()):
                continue
            override = cls.find_method(func.attr)
            if override is not None and override is not callee and override not in found:
                found.append(override)
        return tuple(found)

    def call_edges(
        self,
        function: FunctionInfo,
        tensor_arguments: Callable[[ast.Call], tuple[str, ...]] | None = None,
    ) -> tuple[list[FunctionInfo], list[ExternalRef]]:
        """What `function` calls: same-file functions, and calls that leave the file (with the
        arguments `tensor_arguments` says are tensors, for a call of a function)."""
        local: list[FunctionInfo] = []
        external: list[ExternalRef] = []
        for node, same_file, ref in self.call_targets(function):
            local.extend(same_file)
            if ref is not None:
                external.append(_with_tensors(ref, node, tensor_arguments))
        return local, external

    def call_targets(
        self, function: FunctionInfo
    ) -> Iterator[tuple[ast.Call, Sequence[FunctionInfo], ExternalRef | None]]:
        """Each call in `function`'s own body with what it runs: same-file functions, and the call
        that leaves the file (None when it does not)."""
        for node in self._calls(function):
            targets = self._same_file_targets(node, function)
            if targets is not None:
                yield node, targets[0], targets[1]
            else:
                yield node, (), self.external_call(node, function)
            for member in self.sequence_members(node, function):  # each module a Sequential runs
                if isinstance(member, str):
                    yield node, (), ExternalRef("instance", member)
                elif member.is_module and (forward := member.find_method("forward")) is not None:
                    yield node, (forward,), None


def _with_tensors(
    ref: ExternalRef, call: ast.Call, tensor_arguments: Callable[[ast.Call], tuple[str, ...]] | None
) -> ExternalRef:
    if tensor_arguments is None or ref.kind not in ("call", "table"):
        return ref
    tensors = tensor_arguments(call)
    return ExternalRef(ref.kind, ref.target, ref.member, tensors) if tensors else ref
