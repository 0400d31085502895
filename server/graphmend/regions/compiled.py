"""`CompiledRegions`: the compiled entries of a module and every same-file function they reach,
with the chain that reaches it (Dynamo traces into each function a compiled frame calls, so a
break inside a helper is a break of the entry)."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from ..message_sets import message_sets
from ..semantics import ClassInfo, FunctionInfo, ModuleIndex
from ..torch_api import DISABLE_DECORATORS
from .call_graph import CallGraph
from .entries import EntryFinder
from .entry_calls import Caller, EntryCalls
from .instances import Instances
from .records import ExternalRef, ProjectContext, Reach
from .resolution import CallResolution
from .scope_facts import ScopeFacts


class CompiledRegions:
    """The compiled entries of a module and the functions reachable from them. It builds its parts
    (`facts`, `instances`, `resolution`, `call_graph`, `entry_finder`), each from what it needs, and
    forwards what the rest of graphmend reads of a module's regions to the part that knows it."""

    def __init__(
        self,
        index: ModuleIndex,
        module_forward_is_compiled: bool = True,
        context: ProjectContext | None = None,
        compile_lines: list[int] | None = None,
        callees: Callable[[CompiledRegions, FunctionInfo], list[FunctionInfo]] | None = None,
    ) -> None:
        self.index = index
        self.context = context or ProjectContext()
        # How the call graph is read (`units.EdgeCache` reuses the edges of unchanged units).
        self._callees = callees or (lambda regions, function: list(regions.own_callees(function)))
        self.facts = ScopeFacts(index)
        self.instances = Instances(index, self.facts)
        self.resolution = CallResolution(index, self.facts, self.instances)
        self.call_graph = CallGraph(index, self.facts, self.instances, self.resolution)
        self.replayed = _reorderable_functions(index)
        self.rebound = _rebound_functions(index)
        # Functions decorated with `torch.compiler.disable` → the decorator
        self.disabled = {id(f.node): d for f in index.all_functions if (d := disable_decorator(f, index)) is not None}
        self.entry_finder = EntryFinder(
            index, self.facts, self.instances, self.resolution, self.context, module_forward_is_compiled, compile_lines
        )
        self.entries = self.entry_finder.entries
        self.remote_entries = self.entry_finder.remote_entries  # compile sites aimed at other files
        self.entry_calls = EntryCalls(index, self.facts, self.resolution, self.entries)
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
                # `disable(recursive=False)`: its own frame is skipped, the functions it calls compile
                through = self.callees(callee) if is_shallow(self.disabled.get(id(callee.node))) else []
                for chain in ((callee,), *((callee, inner) for inner in through)):
                    function = chain[-1]
                    if id(function.node) not in reached and not self.untraced(function):
                        nxt = Reach(reach.entry, (*reach.chain, *chain))
                        reached[id(function.node)] = nxt
                        queue.append(nxt)
        return reached

    def untraced(self, function: FunctionInfo) -> bool:
        """Dynamo never traces the function's body: it is replayed after the graph, rebound to what
        wraps it (an operator, `_f = _in_graph(_f)`), or disabled."""
        node = id(function.node)
        return node in self.replayed or node in self.rebound or node in self.disabled

    def callees(self, function: FunctionInfo) -> list[FunctionInfo]:
        """The same-file functions `function` calls (`self.block(x)` counts as `Block.forward`)."""
        return self._callees(self, function)

    # What the parts know, forwarded: the rules, inference and the project read it here.

    def own_callees(self, function: FunctionInfo) -> Iterator[FunctionInfo]:
        """`callees`, found by walking the function."""
        return self.call_graph.own_callees(function)

    def same_file_calls(self, function: FunctionInfo) -> Iterator[tuple[ast.Call, FunctionInfo]]:
        """Each call in `function`'s own body with each same-file function it may run."""
        return self.call_graph.same_file_calls(function)

    def call_targets(
        self, function: FunctionInfo
    ) -> Iterator[tuple[ast.Call, Sequence[FunctionInfo], ExternalRef | None]]:
        """Each call in `function`'s own body with what it runs (`CallGraph.call_targets`)."""
        return self.call_graph.call_targets(function)

    def call_edges(
        self,
        function: FunctionInfo,
        tensor_arguments: Callable[[ast.Call], tuple[str, ...]] | None = None,
    ) -> tuple[list[FunctionInfo], list[ExternalRef]]:
        """What `function` calls, in this file and outside it (`CallGraph.call_edges`)."""
        return self.call_graph.call_edges(function, tensor_arguments)

    def calls_of_entry(self, function: FunctionInfo) -> list[tuple[Caller, ast.Call]]:
        """The calls of this file that run a compiled function as its frame (`EntryCalls.of`)."""
        return self.entry_calls.of(function)

    def object_classes(self, expr: ast.expr, scope: FunctionInfo) -> tuple[ClassInfo, ...]:
        """The classes of this file `expr` may be an object of (`ImplicitCalls.classes`)."""
        return self.call_graph.implicit.classes(expr, scope)

    def calls_in(self, function: FunctionInfo) -> list[ast.Call]:
        """The calls in the function's own body (not in nested functions)."""
        return self.facts.calls(function)

    def bindings(self, function: FunctionInfo) -> list[ast.stmt | ast.expr]:
        """The statements (and walrus expressions) that bind names in a scope's own body."""
        return self.facts.bindings(function)

    def assigned_values(self, function: FunctionInfo) -> dict[str, list[ast.expr]]:
        """name → the values `name = value` gives it in a scope's own body (`ScopeFacts.assigned_values`)."""
        return self.facts.assigned_values(function)

    def class_attribute_instances(self, cls: ClassInfo) -> dict[str, ClassInfo | str]:
        """`self.block = Block(...)` in any method → {"block": Block} (a qualified name when imported)."""
        return self.instances.class_attribute_instances(cls)

    def resolve_call(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """The same-file function or method a call runs, if it can be known statically."""
        return self.resolution.resolve_call(call, scope)

    def module_call_target(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """`self.block(x)` where `self.block = Block(...)`: calling a module runs its forward."""
        return self.resolution.module_call_target(call, scope)

    def attribute_functions(
        self, call: ast.Call, scope: FunctionInfo
    ) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What `self.fn(...)` runs when the class binds `self.fn` to a function."""
        return self.resolution.attribute_functions(call, scope)

    def module_level_captures(self) -> frozenset[str]:
        """The Dynamo settings the module turns on for every entry (`EntryFinder.module_level_captures`)."""
        return self.entry_finder.module_level_captures()


def _reorderable_functions(index: ModuleIndex) -> frozenset[int]:
    """Functions of the module its top level registers with `reorderable_logging_functions`
    (Dynamo records calls to them and replays them after the graph) or `ignore_logging_functions`
    (Dynamo drops the calls): it never traces their bodies, so nothing in them is compiled code."""
    functions = index.functions
    registered = {  # in the order the module's statements leave them: `.discard`, `= set()` take them out
        *message_sets(index).registered["replayed"],
        *message_sets(index).registered["dropped"],
    }
    return frozenset(id(functions[name].node) for name in registered if name in functions)


def _rebound_functions(index: ModuleIndex) -> frozenset[int]:
    """Module-level functions that a later top-level statement rebinds to what a call makes of them
    (`_f = _in_graph(_f)`, `f = torch.library.custom_op(...)(f)`): a call of the name runs that,
    an operator Dynamo does not trace into, not the body."""
    functions = index.functions
    rebound = set()
    for stmt in index.tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in functions
            and functions[stmt.targets[0].id].node.lineno < stmt.lineno
            and isinstance(stmt.value, ast.Call)
            and any(isinstance(a, ast.Name) and a.id == stmt.targets[0].id for a in stmt.value.args)
        ):
            rebound.add(id(functions[stmt.targets[0].id].node))
    return frozenset(rebound)


def disable_decorator(function: FunctionInfo, index: ModuleIndex) -> ast.expr | None:
    """The function's `@torch.compiler.disable` (or `torch._dynamo.disable`, with or without
    arguments), read where the function is defined: Dynamo skips its frame, so nothing in it is
    compiled code, and each call of it from compiled code splits the graph."""
    shadowed = function.parent.local_names if function.parent else frozenset()
    return next(
        (
            d
            for d in function.node.decorator_list
            if index.qualified_name(d.func if isinstance(d, ast.Call) else d, shadowed) in DISABLE_DECORATORS
        ),
        None,
    )


def is_shallow(decorator: ast.expr | None) -> bool:
    """`disable(recursive=False)`: Dynamo skips the function's own frame but compiles what it calls."""
    return isinstance(decorator, ast.Call) and any(
        k.arg == "recursive" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in decorator.keywords
    )
