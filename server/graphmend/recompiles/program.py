"""A file seen as a program that runs compiled code again and again: the callables it compiles, the
calls that run them, and what around each call (its loops, grad mode, autocast) changes between
calls. What the recompile rules (GM6xx) read; parsed once per file that holds a compile site."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ..regions import CompiledRegions, Entry
from ..semantics import ClassInfo, FunctionInfo, ModuleIndex

Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_WORD = re.compile(r"\w+")
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPILE = frozenset({"torch.compile", "torch._dynamo.optimize"})


@dataclass
class Compiled:
    """A callable the file compiles: the names whose calls run it, the function Dynamo traces as
    its frame when it is this file's (None: torch's or a library's code), and for a module the
    names of the instance whose attributes `self.` reads."""

    site: ast.Call | ast.expr  # the compile call, or the decorator
    names: frozenset[str]
    function: FunctionInfo | None = None
    instance: frozenset[str] = frozenset()
    cls: ClassInfo | None = None
    target: ast.expr | None = None  # what `torch.compile(target)` compiles, when a call
    library: str | None = None  # the imported class of the compiled instance (`transformers.GPT2LMHeadModel`)
    forward_replaced: bool = False  # `model.forward = torch.compile(model.forward)`: the instance's own calls run it

    @property
    def positional(self) -> list[str]:
        """The compiled function's positional parameters as its callers pass them: past `self` for a
        module's `forward` or a method; [] when the compiled code is not this file's."""
        function = self.function
        if function is None:
            return []
        names = [a.arg for a in (*function.node.args.posonlyargs, *function.node.args.args)]
        return names[1:] if self.cls is not None or function.owner is not None else names

    def describe(self) -> str:
        if self.function is not None:
            return f"`{self.function.qualname}`"
        return f"`{sorted(self.names)[0]}`" if self.names else "the compiled module"


@dataclass
class CallSite:
    """A call that runs a compiled callable: the call, its scope and the statements above it."""

    call: ast.Call
    compiled: Compiled
    scope: Scope
    ancestors: tuple[ast.AST, ...]  # outermost first, up to the scope, the call excluded

    @property
    def loops(self) -> list[ast.For | ast.AsyncFor | ast.While]:
        return [a for a in self.ancestors if isinstance(a, _LOOPS)]


@dataclass
class Program:
    """One file's compiled callables and the calls that run them (see the module docstring)."""

    index: ModuleIndex
    regions: CompiledRegions
    lines: list[str]  # the source's lines: which scopes can hold a call of a name is found in them
    compile_lines: list[int]  # the sorted lines where a compile call can be (`compile_call_lines`)
    torch_version: tuple[int, int] | None = None  # the release the program runs on (`target_torch`)
    _paths: dict[int, tuple[ast.AST, ...]] = field(default_factory=dict)

    # -- structure ------------------------------------------------------------------------------

    def ancestors(self, node: ast.AST) -> tuple[ast.AST, ...]:
        """The nodes above `node` up to and including its scope, outermost first: found by descending
        from the module through the children whose span holds it (no parent map of the whole file)."""
        key = id(node)
        if key not in self._paths:
            path = _path_to(self.index.tree, node) or [self.index.tree]
            last_scope = max(i for i, above in enumerate(path) if isinstance(above, _SCOPES))
            self._paths[key] = tuple(path[last_scope:])
        return self._paths[key]

    def parent(self, node: ast.AST) -> ast.AST | None:
        above = self.ancestors(node)
        return above[-1] if above else None

    def scope_of(self, node: ast.AST) -> Scope:
        above = self.ancestors(node)
        scope = above[0] if above else self.index.tree
        assert isinstance(scope, _SCOPES)
        return scope

    @cached_property
    def _functions(self) -> dict[int, FunctionInfo]:
        return {id(f.node): f for f in self.index.all_functions}

    def function_info(self, scope: Scope) -> FunctionInfo | None:
        return self._functions.get(id(scope))

    def qualified(self, expr: ast.expr) -> str | None:
        info = self.function_info(self.scope_of(expr))
        return self.index.qualified_name(expr, info.local_names if info else frozenset())

    def own_nodes(self, scope: ast.AST) -> Iterator[ast.AST]:
        """The nodes of a scope's own body, nested scopes left out (their headers' defaults kept)."""
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, _SCOPES):
                todo.extend(ast.iter_child_nodes(node))

    # -- what is compiled --------------------------------------------------------------------------

    def calls_on_lines(self, words: frozenset[str]) -> list[ast.Call]:
        """The calls of the scopes that span a line holding one of `words` (from the scopes' call
        lists the compiled regions keep): a superset of the calls of those names, without a walk of
        every function of a large file). Lines are matched by their words, once each: a file of
        thousands of compiled functions asks for thousands of names (issue 68)."""
        if all(word.isidentifier() for word in words):
            found = [n for n, line in enumerate(self.lines, 1) if not words.isdisjoint(_WORD.findall(line))]
        else:
            found = [n for n, line in enumerate(self.lines, 1) if any(word in line for word in words)]
        return self._calls_spanning(found)

    def _calls_spanning(self, numbers: list[int]) -> list[ast.Call]:
        """The calls of the module's body and of the functions that span one of the sorted lines."""
        if not numbers:
            return []
        facts = self.regions.facts
        found = list(facts.calls(None))
        for function in self.index.all_functions:
            node = function.node
            first = bisect.bisect_left(numbers, node.lineno)
            if first < len(numbers) and numbers[first] <= (node.end_lineno or node.lineno):
                found += facts.calls(function)
        return found

    @cached_property
    def compiled(self) -> list[Compiled]:
        found: list[Compiled] = []
        entries = {id(entry.site): entry for entry in self.regions.entries}
        for function in self.index.all_functions:
            for decorator in function.node.decorator_list:
                if id(decorator) in entries:
                    found.append(Compiled(decorator, frozenset({function.name}), function))
        for node in self._calls_spanning(self.compile_lines):
            if _may_compile(node) or id(node) in entries:
                compiled = self._compile_call(node, entries)
                if compiled is not None:
                    found.append(compiled)
        return found

    def _compile_call(self, call: ast.Call, entries: dict[int, Entry]) -> Compiled | None:
        """The callable `torch.compile(target, ...)` (or `torch.compile(...)(target)`, `x.compile()`) makes."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "compile"
            and not call.args
            and isinstance(func.value, ast.Name)
        ):
            if self.qualified(func) is not None:
                return None  # `torch.compile()` itself
            cls = self.regions.instances.instance_class(func.value, self.function_info(self.scope_of(call)))
            library = self._library_class(func.value)
            if cls is None and library is None:
                return None
            forward = cls.find_method("forward") if cls is not None else None
            name = func.value.id
            return Compiled(call, frozenset({name}), forward, frozenset({name}), cls, func.value, library, True)
        is_compile = self.qualified(func) in _COMPILE and (call.args or call.keywords)
        options_first = isinstance(func, ast.Call) and self.qualified(func.func) in _COMPILE and len(call.args) == 1
        if not (is_compile and call.args) and not options_first:
            return None
        target = call.args[0]
        if isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name) and target.attr == "forward"):
            return None  # `torch.compile(self.__call__)`: compiled on an object the program's loops never name
        entry = entries.get(id(call))
        function = entry.function if entry is not None else None
        scope_info = self.function_info(self.scope_of(call))
        cls = self.regions.instances.instance_class(target, scope_info) if not isinstance(target, ast.Lambda) else None
        instance_names = frozenset({target.id}) if isinstance(target, ast.Name) else frozenset()
        library = self._library_class(target)
        parent = self.parent(call)
        names: set[str] = set()
        forward_replaced = False
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            bound = parent.targets[0]
            if isinstance(bound, ast.Name):
                names.add(bound.id)
            elif (
                isinstance(bound, ast.Attribute)
                and bound.attr == "forward"
                and isinstance(bound.value, ast.Name)
                and isinstance(target, ast.Attribute)
                and target.attr == "forward"
                and isinstance(target.value, ast.Name)
                and target.value.id == bound.value.id
            ):  # `model.forward = torch.compile(model.forward)`
                names.add(bound.value.id)
                instance_names = frozenset({bound.value.id})
                library = self._library_class(bound.value)
                cls = self.regions.instances.instance_class(bound.value, scope_info)
                forward_replaced = True
        if cls is not None and function is None:
            function = cls.find_method("forward")
        return Compiled(
            call,
            frozenset(names),
            function,
            instance_names | (frozenset(names) if cls is not None or library is not None else frozenset()),
            cls,
            target,
            library,
            forward_replaced,
        )

    def _library_class(self, expr: ast.expr) -> str | None:
        """The imported class `expr` is an instance of (`nn.LeakyReLU(...)`, `model = GPT2LMHeadModel(...)`)."""
        scope = self.function_info(self.scope_of(expr))
        found = self.regions.instances.imported_instance(expr, scope)
        if found is None and isinstance(expr, ast.Call):  # `nn.LeakyReLU(0.1)`: a class by its name's case
            qualified = self.qualified(expr.func)
            if qualified is not None and qualified.rsplit(".", 1)[-1][:1].isupper():
                return qualified
        return found

    # -- where it runs ---------------------------------------------------------------------------

    @cached_property
    def call_sites(self) -> list[CallSite]:
        """Every call of a compiled callable, in source order: by a name bound to it, on the compile
        call itself (`torch.compile(m)(x)`), and `model.generate(...)` where the model's forward is compiled."""
        by_name: dict[str, list[Compiled]] = {}
        methods: dict[str, Compiled] = {}  # `@torch.compile` on a method: called as `obj.name(...)`
        for compiled in self.compiled:
            function = compiled.function
            if function is not None and function.owner is not None and compiled.site in function.node.decorator_list:
                methods[function.node.name] = compiled
                continue
            for name in compiled.names:
                by_name.setdefault(name, []).append(compiled)
        sites = []
        words = frozenset({*by_name, *methods})
        for node in self.calls_on_lines(words) if words else ():
            matched: Compiled | None = None
            if isinstance(node.func, ast.Attribute) and node.func.attr in methods:
                matched = self._method_call(node, methods[node.func.attr])
            elif isinstance(node.func, ast.Name) and node.func.id in by_name:
                matched = self._closest(by_name[node.func.id], node)
            elif isinstance(node.func, ast.Call):
                matched = next((c for c in self.compiled if c.site is node.func), None)
            elif (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "generate"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in by_name
            ):
                matched = next((c for c in by_name[node.func.value.id] if c.forward_replaced), None)
            if matched is not None:
                above = self.ancestors(node)
                sites.append(CallSite(node, matched, self.scope_of(node), above))
        return sorted(sites, key=lambda s: (s.call.lineno, s.call.col_offset))

    def _method_call(self, call: ast.Call, compiled: Compiled) -> Compiled | None:
        """`self.step(...)` in a method of the compiled method's class, or `obj.step(...)` when no
        other class of the file has a method of that name: a call of the compiled method."""
        assert compiled.function is not None and compiled.function.owner is not None
        owner = compiled.function.owner
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        caller = self.function_info(self.scope_of(call))
        if isinstance(receiver, ast.Name) and caller is not None and caller.owner is owner and caller.is_self(receiver):
            return compiled
        name = compiled.function.node.name
        others = [cls for cls in self.index.classes.values() if cls is not owner and name in cls.methods]
        return compiled if not others else None

    def _closest(self, candidates: list[Compiled], call: ast.Call) -> Compiled | None:
        """The compiled callable a name means at `call`: the last bound before it (a name rebound in a
        loop means the latest one)."""
        before = [c for c in candidates if (c.site.lineno, c.site.col_offset) <= (call.lineno, call.col_offset)]
        return before[-1] if before else candidates[-1]

    def sites_of(self, compiled: Compiled) -> list[CallSite]:
        return [site for site in self.call_sites if site.compiled is compiled]

    @property
    def stacks_of_guards(self) -> bool:
        """Whether a failed guard comes with the user's stack (torch 2.13 and later): a guard made in
        torch's code (a submodule's `training`) is then placed at the program's line that called it;
        before (measured on 2.9.1), only at the compiled function's `def`."""
        return self.torch_version is None or self.torch_version >= (2, 13)

    def calls_of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Call, Scope]]:
        """The same-file calls of a function by its name (a module-level function, or nested)."""
        return [
            (node, self.scope_of(node))
            for node in self.calls_on_lines(frozenset({function.name}))
            if isinstance(node.func, ast.Name) and node.func.id == function.name
        ]


def _path_to(root: ast.AST, node: ast.AST) -> list[ast.AST] | None:
    """The nodes from `root` down to `node`'s parent, choosing at each level the child whose source
    span holds `node` (children without a span, `arguments` or `withitem`, are looked into)."""
    path = [root]
    current = root
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    while True:
        following = None
        for child in ast.iter_child_nodes(current):
            if child is node:
                return path
            if _holds(child, node, start, end):
                following = child
                break
        if following is None:
            return None
        path.append(following)
        current = following


def _holds(candidate: ast.AST, node: ast.AST, start: tuple[int, int], end: tuple[int, int]) -> bool:
    if not hasattr(candidate, "lineno"):
        return any(child is node or _holds(child, node, start, end) for child in ast.iter_child_nodes(candidate))
    first = (candidate.lineno, candidate.col_offset)  # type: ignore[attr-defined]
    last = (candidate.end_lineno or 0, candidate.end_col_offset or 0)  # type: ignore[attr-defined]
    return first <= start and end <= last


def _may_compile(call: ast.Call) -> bool:
    """Whether a call's text can be a compile (`….compile(…)`, `compile(…)`, `optimize(…)(…)`, or a
    name bound to compile options called on a target): the cheap test before names are resolved."""
    func = call.func.func if isinstance(call.func, ast.Call) else call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return isinstance(call.func, ast.Call) or name in ("compile", "optimize")


def first_read(function: ast.AST, name: str) -> ast.Name | None:
    """The first read of `name` in a function's own body (nested functions and lambdas included: a
    closure reads it when the function runs), in source order: where Dynamo guards its value."""
    reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return min(reads, key=lambda n: (n.lineno, n.col_offset), default=None)


def first_self_read(method: FunctionInfo, attribute: str) -> ast.Attribute | None:
    """The first read of `self.<attribute>` in a method, in source order."""
    reads = [
        n
        for n in ast.walk(method.node)
        if isinstance(n, ast.Attribute)
        and n.attr == attribute
        and isinstance(n.ctx, ast.Load)
        and method.is_self(n.value)
    ]
    return min(reads, key=lambda n: (n.lineno, n.col_offset), default=None)


class _DefName(ast.AST):
    """The name in a `def` line, as a node to report at (the recorder places a guard on the whole
    call, a grad mode or an input's shape, at the compiled function's `def` line)."""

    _fields = ()


def def_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    node = _DefName()
    offset = len("async def ") if isinstance(function, ast.AsyncFunctionDef) else len("def ")
    node.lineno = function.lineno  # type: ignore[attr-defined]
    node.col_offset = function.col_offset + offset  # type: ignore[attr-defined]
    node.end_lineno = function.lineno  # type: ignore[attr-defined]
    node.end_col_offset = function.col_offset + offset + len(function.name)  # type: ignore[attr-defined]
    return node
