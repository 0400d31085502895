"""The call graph of one module: what each call in a function's own body runs, same-file functions
(overrides and the members of an `nn.Sequential` included) and calls that leave the file."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

from ..semantics import FunctionInfo, ModuleIndex
from .implicit import ImplicitCalls
from .instances import Instances
from .records import ExternalRef
from .resolution import CallResolution
from .scope_facts import ScopeFacts


class CallGraph:
    """The edges of one module's calls, read from its scope facts, instances and call resolution."""

    def __init__(self, index: ModuleIndex, facts: ScopeFacts, instances: Instances, resolution: CallResolution) -> None:
        self.index = index
        self.facts = facts
        self.instances = instances
        self.resolution = resolution
        self.implicit = ImplicitCalls(index, facts, instances)

    def same_file_calls(self, function: FunctionInfo) -> Iterator[tuple[ast.Call, FunctionInfo]]:
        """Each call in `function`'s own body with each same-file function it may run."""
        for node in self.facts.calls(function):
            for target in (self._same_file_targets(node, function) or ((), None))[0]:
                yield node, target

    def own_callees(self, function: FunctionInfo) -> Iterator[FunctionInfo]:
        """The same-file functions `function` calls, found by walking the function: named in a call,
        or run implicitly by a statement or an operator (`ImplicitCalls`)."""
        for node in self.facts.calls(function):
            yield from (self._same_file_targets(node, function) or ((), None))[0]
        yield from (method for _, method in self.implicit.targets(function))

    def _same_file_targets(
        self, call: ast.Call, scope: FunctionInfo
    ) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What a call runs when this file says: the function or module `forward` it resolves to,
        or the functions `self.fn(...)` is bound to (with the imported table or function, if so)."""
        resolution = self.resolution
        callee = resolution.resolve_call(call, scope) or resolution.module_call_target(call, scope)
        if callee is not None:
            return (callee, *self._overrides(call, scope, callee)), None
        return resolution.attribute_functions(call, scope)

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
        local.extend(method for _, method in self.implicit.targets(function))
        return local, external

    def call_targets(
        self, function: FunctionInfo
    ) -> Iterator[tuple[ast.Call, Sequence[FunctionInfo], ExternalRef | None]]:
        """Each call in `function`'s own body with what it runs: same-file functions, and the call
        that leaves the file (None when it does not)."""
        for node in self.facts.calls(function):
            targets = self._same_file_targets(node, function)
            if targets is not None:
                yield node, targets[0], targets[1]
            else:
                yield node, (), self.resolution.external_call(node, function)
            for member in self.instances.sequence_members(node, function):  # each module a Sequential runs
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
