"""Which code runs under torch.compile: entry points, and everything they call in the same file.

Dynamo traces into every Python function a compiled frame calls, so a break inside a helper is a
break of the compiled entry (see the nested-graph-break docs). Code that no entry reaches is never
compiled and must never be flagged. What other files of the project compile or call comes in as a
`ProjectContext` (see `project.py`); calls that leave the file are named as `ExternalRef`s.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterator

from .semantics import (
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    attribute_chain,
    child_nodes,
)

_COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize"})
# nn.Module methods that return the module itself: `torch.compile(Model().cuda())` compiles a `Model`.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16", "type",
                           "requires_grad_", "share_memory", "to_empty", "xpu", "mps", "ipu"})
_REORDERABLE_REGISTRY = "torch._dynamo.config.reorderable_logging_functions.add"
CONFIG_PATCH = "torch._dynamo.config.patch"
# Dynamo settings under which what graphmend reports as GM301/GM302 is traced, not a break.
CAPTURE_SETTINGS = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})


@dataclass(frozen=True)
class ExternalRef:
    """A call (or compile target) that leaves the file, by qualified name, resolved by the project:
    `call` runs what `target` names (a function, a static method); `table` runs one of the
    functions of the module-level dict `target`; `instance` calls an instance of the class
    `target` (its `forward` for a module); `method` calls method `member` on one."""

    kind: str
    target: str
    member: str = ""
    # Arguments that are tensors at the call (positions as "0", "1", ... and keyword names), so
    # the callee's parameters get the kinds compiled callers give them (a `table` or `call`).
    tensors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a compiled entry of another file is: its path and the name in its `def` line (0-based)."""

    path: str
    line: int
    character: int
    end_character: int


@dataclass(frozen=True)
class ExternalEntry:
    """A function of this file that compiled code of another file calls (or compiles)."""

    qualname: str
    why: str  # "reached from compiled `pkg.model.Net.forward` in model.py (...)", "compiled by ..."
    origin: Origin
    via: tuple[str, ...] = ()  # the functions of other files between the entry and this one
    called: bool = False  # reached through a call (not itself compiled by a compile site)
    cuda_graphs: str | None = None  # the compile site's request for CUDA graphs, in its file's words


@dataclass(frozen=True)
class ProjectContext:
    """What the rest of the project says about one file: which of its functions run compiled
    because of other files, which imported base classes are nn.Module subclasses, and what
    those bases' constructors bind."""

    entries: tuple[ExternalEntry, ...] = ()
    module_bases: frozenset[str] = frozenset()
    # Base classes in other files → the instance attributes their `__init__` chain binds.
    base_attributes: tuple[tuple[str, frozenset[str]], ...] = ()
    # Functions (and module-level tables of functions) of other files, by the qualified name this
    # file imports them under → (why running one is not pure, or None; a caveat, or None).
    foreign_functions: tuple[tuple[str, str | None, str | None], ...] = ()
    # Functions of this file → the parameters that compiled callers in other files pass tensors.
    tensor_parameters: tuple[tuple[str, frozenset[str]], ...] = ()
    # Imported bases found in the project that are not nn.Module subclasses (never taken for one by guess).
    plain_bases: frozenset[str] = frozenset()
    # (class, decorator): a class decorator of another file sets the class's `forward` at run time.
    replaced_forwards: tuple[tuple[str, str], ...] = ()

    def forward_replaced_by(self, class_name: str) -> str | None:
        """The decorator that may swap `class_name.forward` at run time, as this file names it."""
        return next((decorator for name, decorator in self.replaced_forwards if name == class_name), None)

    def foreign_verdict(self, qualname: str) -> tuple[str | None, str | None] | None:
        """Purity of an imported function (or table): see `foreign_functions`; None when unknown."""
        return next(((reason, caveat) for name, reason, caveat in self.foreign_functions if name == qualname), None)

    def parameters_given_tensors(self, qualname: str) -> frozenset[str]:
        return next((names for name, names in self.tensor_parameters if name == qualname), frozenset())


@dataclass(frozen=True)
class Entry:
    """A function Dynamo compiles as a top-level frame, and the node that says so."""

    function: FunctionInfo
    why: str
    site: ast.AST
    captures: frozenset[str] = frozenset()  # CAPTURE_SETTINGS turned on for this entry
    origin: Origin | None = None  # set when the entry is compiled because of another file
    via: tuple[str, ...] = ()  # with `origin`: the functions of other files that lead here
    called: bool = False  # with `origin`: compiled code of another file calls it (a nested frame)
    cuda_graphs: str | None = None  # the compile site's words when it asks for CUDA graphs (`cuda_graph_request`)


@dataclass(frozen=True)
class Reach:
    """How a function is reached from a compiled entry (the call chain, entry first)."""

    entry: Entry
    chain: tuple[FunctionInfo, ...]


UNKNOWN_VALUE = ast.Constant(value=None)  # `assigned_values`: a value bound other than by `name = value`


def bound_names(target: ast.AST) -> Iterator[str]:
    return (n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


_BINDINGS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FORWARD_IS_COMPILED = "nn.Module.forward is treated as compiled"  # the default assumption's reason


def _guess_note(cls: ClassInfo) -> str:
    """Why a class whose bases graphmend cannot see is taken for an nn.Module (`ModuleIndex._unseen_base`)."""
    if cls.guessed_from is None:
        return ""
    return (f"; `{cls.name}` is taken for an nn.Module: it defines `forward` and its base `{cls.guessed_from}` "
            "is in no checked file (name such bases in the `module-bases` setting)")


def _walk_no_scopes(nodes: list[ast.stmt] | list[ast.AST]) -> Iterator[ast.AST]:
    """All nodes below `nodes` (in no particular order), not descending into nested functions,
    classes or lambdas."""
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(child_nodes(node))


class CompiledRegions:
    """Finds compiled entries of a module and the functions reachable from them."""

    def __init__(
        self, index: ModuleIndex, module_forward_is_compiled: bool = True, context: ProjectContext | None = None,
        compile_lines: list[int] | None = None,
        callees: Callable[[CompiledRegions, FunctionInfo], list[FunctionInfo]] | None = None,
    ) -> None:
        self.index = index
        self.module_forward_is_compiled = module_forward_is_compiled
        self.context = context or ProjectContext()
        # Sorted 1-based lines where a compile call can be (see `compile_call_lines`): only the
        # functions that span one are searched for compile sites. None: search every function.
        self.compile_lines = compile_lines
        # How the call graph is read (`units.EdgeCache` reuses the edges of unchanged units).
        self._callees = callees or (lambda regions, function: list(regions.own_callees(function)))
        self._instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._attribute_instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._attribute_functions: dict[int, dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]] = {}
        self._call_cache: dict[int, tuple[list[ast.Call], list[ast.Assign]]] = {}
        self._binding_cache: dict[int, list[ast.stmt | ast.expr]] = {}
        self._values_cache: dict[int, dict[str, list[ast.expr]]] = {}
        self.remote_entries: list[tuple[ExternalRef, str, ast.AST]] = []  # compile sites aimed at other files
        self.replayed = self._reorderable_functions()
        self.entries = self._find_entries()
        self.reached = self._reach()

    # ----------------------------------------------------------------- entries
    def _reorderable_functions(self) -> frozenset[int]:
        """Functions registered with `torch._dynamo.config.reorderable_logging_functions.add(f)` at
        module level: Dynamo records calls to them and replays them after the graph, never tracing
        their bodies, so nothing in them is compiled code."""
        found: set[int] = set()
        for stmt in self.index.tree.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if (
                isinstance(call, ast.Call)
                and self.index.qualified_name(call.func) == _REORDERABLE_REGISTRY
                and len(call.args) == 1
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id in self.index.functions
            ):
                found.add(id(self.index.functions[call.args[0].id].node))
        return frozenset(found)

    def _find_entries(self) -> list[Entry]:
        entries: list[Entry] = []
        seen: set[int] = set()
        everywhere = self._module_level_captures()

        def add(function: FunctionInfo | None, why: str, site: ast.AST, captures: frozenset[str] = frozenset()) -> None:
            if function is not None and id(function.node) not in seen:
                seen.add(id(function.node))
                entries.append(Entry(function, why, site, captures | everywhere, cuda_graphs=cuda_graph_request(site)))

        for function in self.index.all_functions:
            captures: set[str] = set()
            for decorator in function.node.decorator_list:
                if self._is_compile_callable(decorator, function.parent):
                    add(function, "decorated with @torch.compile", decorator, frozenset(captures))
                    break
                captures |= self._patched_settings(decorator, function.parent)  # a patch above the compile wraps it

        calls = list(self._scoped_calls())
        wrapped = {  # `torch._dynamo.config.patch(...)(torch.compile(...))`
            id(node.args[0]): self._patched_settings(node.func, scope)
            for scope, node in calls
            if isinstance(node.func, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Call)
        }
        for scope, node in calls:
            shadowed = scope.local_names if scope else frozenset()
            if self.index.qualified_name(node.func, shadowed) in _COMPILE_FUNCTIONS:
                target = node.args[0] if node.args else _keyword(node, "model")
                if target is not None:
                    why = f"compiled by torch.compile at line {node.lineno}"
                    function = self._compile_target(target, scope)
                    add(function, why, node, wrapped.get(id(node), frozenset()))
                    remote = None if function is not None else self._remote_target(target, scope)
                    if remote is not None:
                        self.remote_entries.append((remote, why, node))
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "compile" and not node.args:
                why = f"compiled by .compile() at line {node.lineno}"
                cls = self._instance_class(node.func.value, scope)
                if cls is not None and cls.is_module:
                    add(cls.find_method("forward"), why, node)
                elif cls is None:
                    imported = self._imported_instance(node.func.value, scope)
                    if imported is not None:
                        self.remote_entries.append((ExternalRef("instance", imported), why, node))

        if self.module_forward_is_compiled:
            for cls in self.index.classes.values():
                forward = cls.methods.get("forward")
                if cls.is_module and forward is not None:
                    add(forward, FORWARD_IS_COMPILED + _guess_note(cls), forward.node)
        for external in self.context.entries:
            function = self.index.function_by_qualname(external.qualname)
            if function is None:
                continue
            entry = Entry(function, external.why, function.node, everywhere, external.origin, external.via,
                          external.called, external.cuda_graphs)
            if id(function.node) not in seen:
                seen.add(id(function.node))
                entries.append(entry)
            elif external.cuda_graphs is not None:  # a real compile site asking for CUDA graphs beats the assumption
                assumed = next(i for i, e in enumerate(entries) if e.function is function)
                if entries[assumed].why.startswith(FORWARD_IS_COMPILED):
                    entries[assumed] = entry
        return entries

    def _patched_settings(self, expr: ast.expr, scope: FunctionInfo | None) -> frozenset[str]:
        """`torch._dynamo.config.patch(capture_scalar_outputs=True)` → {"capture_scalar_outputs"}."""
        if not isinstance(expr, ast.Call):
            return frozenset()
        shadowed = scope.local_names if scope else frozenset()
        if self.index.qualified_name(expr.func, shadowed) != CONFIG_PATCH:
            return frozenset()
        return frozenset(
            k.arg for k in expr.keywords
            if k.arg in CAPTURE_SETTINGS and isinstance(k.value, ast.Constant) and k.value.value is True
        )

    def _module_level_captures(self) -> frozenset[str]:
        """`torch._dynamo.config.capture_scalar_outputs = True` at module level: for every entry."""
        found = set()
        for stmt in self.index.tree.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is True:
                for target in stmt.targets:
                    qualname = self.index.qualified_name(target)
                    if qualname is not None and qualname.rsplit(".", 1)[0] == "torch._dynamo.config":
                        setting = qualname.rsplit(".", 1)[1]
                        if setting in CAPTURE_SETTINGS:
                            found.add(setting)
        return frozenset(found)

    def _is_compile_callable(self, decorator: ast.expr, scope: FunctionInfo | None) -> bool:
        shadowed = scope.local_names if scope else frozenset()
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.index.qualified_name(func, shadowed) in _COMPILE_FUNCTIONS

    def _remote_target(self, target: ast.expr, scope: FunctionInfo | None) -> ExternalRef | None:
        """What `torch.compile(target)` compiles when it is defined in another file."""
        if isinstance(target, ast.Attribute):
            owner = self._imported_instance(target.value, scope)
            return ExternalRef("method", owner, target.attr) if owner is not None else self._call_ref(target, scope)
        instance = self._imported_instance(target, scope)
        if instance is not None:
            return ExternalRef("instance", instance)
        return self._call_ref(target, scope) if isinstance(target, ast.Name) else None

    def _compile_target(self, target: ast.expr, scope: FunctionInfo | None) -> FunctionInfo | None:
        if isinstance(target, ast.Name):
            function = self.resolve_function_name(target.id, scope)
            if function is not None:
                return function
        if isinstance(target, ast.Attribute):
            owner = self._instance_class(target.value, scope)
            if owner is not None:
                return owner.find_method(target.attr)
            return None
        cls = self._instance_class(target, scope)
        return cls.find_method("forward") if cls is not None and cls.is_module else None

    def _scoped_calls(self) -> Iterator[tuple[FunctionInfo | None, ast.Call]]:
        """The calls of every scope that may hold a compile site."""
        for call in self._calls(None):
            yield None, call
        for function in self.index.all_functions:
            if self._may_compile(function):
                for call in self._calls(function):
                    yield function, call

    def _may_compile(self, function: FunctionInfo) -> bool:
        if self.compile_lines is None:
            return True
        node = function.node
        first = bisect.bisect_left(self.compile_lines, node.lineno)
        return first < len(self.compile_lines) and self.compile_lines[first] <= (node.end_lineno or node.lineno)

    def _calls(self, function: FunctionInfo | None) -> list[ast.Call]:
        """The calls in a scope's own body (not in nested scopes): entries, instance tracking and
        the call graph all need them, so one walk per scope collects calls and assignments."""
        return self._facts(function)[0]

    def _assignments(self, function: FunctionInfo | None) -> list[ast.Assign]:
        return self._facts(function)[1]

    def _facts(self, function: FunctionInfo | None) -> tuple[list[ast.Call], list[ast.Assign]]:
        key = id(function.node) if function else 0
        if key not in self._call_cache:
            calls: list[ast.Call] = []
            assignments: list[ast.Assign] = []
            bindings: list[ast.stmt | ast.expr] = []
            for node in _walk_no_scopes(function.node.body if function else self.index.tree.body):
                if isinstance(node, ast.Call):
                    calls.append(node)
                elif isinstance(node, _BINDINGS):
                    bindings.append(node)
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                        assignments.append(node)
            self._call_cache[key] = (calls, sorted(assignments, key=lambda a: (a.lineno, a.col_offset)))
            self._binding_cache[key] = bindings
        return self._call_cache[key]

    def bindings(self, function: FunctionInfo) -> list[ast.stmt | ast.expr]:
        """The statements (and walrus expressions) that bind names in a scope's own body."""
        self._facts(function)
        return self._binding_cache[id(function.node)]

    def assigned_values(self, function: FunctionInfo) -> dict[str, list[ast.expr]]:
        """name → the values `name = value` gives it in a scope's own body; a binding of another
        form (unpacking, `for`, `with`, `+=`, `:=`) counts as `UNKNOWN_VALUE`."""
        key = id(function.node)
        if key not in self._values_cache:
            found: dict[str, list[ast.expr]] = {}
            for node in self.bindings(function):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, []).append(node.value)
                        else:
                            for name in bound_names(target):
                                found.setdefault(name, []).append(UNKNOWN_VALUE)
                else:
                    targets = [i.optional_vars for i in node.items if i.optional_vars] if isinstance(node, (ast.With, ast.AsyncWith)) else [node.target]  # type: ignore[attr-defined]
                    for name in (n for t in targets for n in bound_names(t)):
                        found.setdefault(name, []).append(UNKNOWN_VALUE)
            self._values_cache[key] = found
        return self._values_cache[key]


    # ----------------------------------------------------------------- name resolution
    def resolve_function_name(self, name: str, scope: FunctionInfo | None) -> FunctionInfo | None:
        """The same-file function a bare name calls, following lexical scoping."""
        current = scope
        while current is not None:
            if name in current.nested:
                return current.nested[name]
            if name in current.local_names:
                return None  # a parameter or local variable, not a function we know
            current = current.parent
        return self.index.functions.get(name)

    def _instance_class(self, expr: ast.expr, scope: FunctionInfo | None) -> ClassInfo | None:
        """The same-file class of `Model()` or of a variable/attribute assigned `Model(...)`."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, ClassInfo) else None

    def _imported_instance(self, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
        """The qualified name of the imported class of `Block()` or of a variable/attribute assigned
        `Block(...)`, when `Block` comes from an import (the project decides whether it is a class)."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, str) else None

    def _instance_of(self, expr: ast.expr, scope: FunctionInfo | None) -> ClassInfo | str | None:
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in _RETURNS_SELF and isinstance(func.value, (ast.Call, ast.Name)):
                found = self._instance_of(func.value, scope)  # `Model().cuda()`, `model.to(device).eval()`
                if found is not None:
                    return found
            return self._constructed(func, scope)
        if isinstance(expr, ast.Name):
            current = scope
            while current is not None:
                if expr.id in current.local_names:
                    return self._scope_instances(current).get(expr.id)
                current = current.parent
            return self._scope_instances(None).get(expr.id)
        if isinstance(expr, ast.Attribute) and scope is not None and scope.owner is not None:
            if scope.is_self(expr.value):
                return self._class_attribute_instances(scope.owner).get(expr.attr)
        return None

    def _constructed(self, func: ast.expr, scope: FunctionInfo | None) -> ClassInfo | str | None:
        """What calling `func` constructs: a same-file class, or an imported name (a class or not)."""
        shadowed = scope.local_names if scope is not None else frozenset()
        if isinstance(func, ast.Name) and func.id not in shadowed and func.id in self.index.classes:
            return self.index.classes[func.id]
        qualname = self._qualified(func, scope)
        return qualname if qualname is not None and _may_be_project_name(qualname) else None

    def _qualified(self, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
        """The qualified name of `expr` when its root name is an import, following lexical
        scoping (a local import counts, a local variable of the same name hides the import)."""
        chain = attribute_chain(expr)
        if chain is None:
            return None
        current = scope
        while current is not None:
            if chain[0] in current.local_names:
                if chain[0] in current.local_imports:
                    return self.index.qualified_name(expr, local_imports=current.local_imports)
                return None
            current = current.parent
        return self.index.qualified_name(expr)

    def _scope_instances(self, scope: FunctionInfo | None) -> dict[str, ClassInfo | str]:
        key = id(scope.node) if scope else 0
        if key not in self._instances:
            found: dict[str, ClassInfo | str] = {}
            self._instances[key] = found  # `m = m.to(device)` asks while the table is built: it sees what is found so far
            for node in self._assignments(scope):
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    constructed = self._instance_of(node.value, scope)
                    if constructed is not None:
                        found[node.targets[0].id] = constructed
            self._instances[key] = found
        return self._instances[key]

    def _class_attribute_instances(self, cls: ClassInfo) -> dict[str, ClassInfo | str]:
        """`self.block = Block(...)` in any method → {"block": Block} (a qualified name when
        `Block` is imported)."""
        if id(cls.node) not in self._attribute_instances:
            found: dict[str, ClassInfo | str] = {}
            self._attribute_instances[id(cls.node)] = found
            for method in cls.methods.values():
                for node in self._assignments(method):
                    constructed = self._constructed(node.value.func, method)  # type: ignore[attr-defined]
                    for target in node.targets:
                        if constructed is not None and isinstance(target, ast.Attribute) and method.is_self(target.value):
                            found[target.attr] = constructed
        return self._attribute_instances[id(cls.node)]

    def _class_attribute_functions(self, cls: ClassInfo) -> dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]:
        """`self.fn = TABLE[key]` (a module-level dict of functions) or `self.fn = function` in the
        class's methods → what `self.fn(...)` may run: functions of this file, or the imported
        table or function. An attribute bound to anything else as well is left out."""
        key = id(cls.node)
        if key in self._attribute_functions:
            return self._attribute_functions[key]
        found: dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]] = {}
        other: set[str] = set()
        for method in cls.methods.values():
            for node in self.bindings(method):
                if not isinstance(node, ast.Assign):
                    continue
                for target in node.targets:
                    if not (isinstance(target, ast.Attribute) and method.is_self(target.value)):
                        continue
                    resolved = self._function_value(node.value, method)
                    previous = found.get(target.attr)
                    if resolved is None or (previous is not None and previous[1] != resolved[1]):
                        other.add(target.attr)
                    else:
                        functions = {id(f.node): f for f in (*(previous[0] if previous else ()), *resolved[0])}
                        found[target.attr] = (tuple(functions.values()), resolved[1])
        self._attribute_functions[key] = {name: value for name, value in found.items() if name not in other}
        return self._attribute_functions[key]

    def _function_value(self, value: ast.expr, scope: FunctionInfo) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """A function `value` names: `function`, `TABLE[key]` (one of the table's), or an imported one."""
        looked_up = isinstance(value, ast.Subscript)
        name = value.value if isinstance(value, ast.Subscript) else value
        if not isinstance(name, ast.Name) or name.id in scope.local_names:
            return None
        if looked_up and name.id in self.index.function_tables:
            return tuple(self.index.functions[f] for f in self.index.function_tables[name.id]), None
        if not looked_up and name.id in self.index.functions:
            return (self.index.functions[name.id],), None
        qualname = self._qualified(name, scope)
        if qualname is None or not _may_be_project_name(qualname):
            return None
        return (), ExternalRef("table" if looked_up else "call", qualname)

    def attribute_functions(self, call: ast.Call, scope: FunctionInfo) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What `self.fn(...)` runs when the class binds `self.fn` to a function (see above)."""
        func = call.func
        owner = scope.method.owner if scope.method else None
        if owner is None or not isinstance(func, ast.Attribute) or not scope.is_self(func.value):
            return None
        if owner.find_method(func.attr) is not None:
            return None
        return self._class_attribute_functions(owner).get(func.attr)

    # ----------------------------------------------------------------- call graph
    def resolve_call(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """The same-file function or method a call runs, if it can be known statically."""
        func = call.func
        if isinstance(func, ast.Name):
            function = self.resolve_function_name(func.id, scope)
            if function is not None:
                return function
            cls = self._instance_class(func, scope)
            return cls.find_method("forward") if cls is not None and cls.is_module else None
        if not isinstance(func, ast.Attribute):
            return None
        owner = scope.method.owner if scope.method else None
        receiver = func.value
        if owner is not None and scope.is_self(receiver):
            method = owner.find_method(func.attr)
            if method is not None:
                return method
        if owner is not None and _is_super_call(receiver):
            for base in owner.bases:
                method = base.find_method(func.attr)
                if method is not None:
                    return method
            return None
        if isinstance(receiver, ast.Name) and receiver.id not in scope.local_names and receiver.id in self.index.classes:
            return self.index.classes[receiver.id].find_method(func.attr)
        cls = self._instance_class(receiver, scope)
        if cls is not None:
            return cls.find_method(func.attr)
        return None

    def module_call_target(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """`self.block(x)` where `self.block = Block(...)`: calling a module runs its forward."""
        func = call.func
        cls = self._instance_class(func, scope)
        if cls is not None and cls.is_module:
            return cls.find_method("forward")
        return None

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

    def _same_file_targets(self, call: ast.Call, scope: FunctionInfo) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What a call runs when this file says: the function or module `forward` it resolves to,
        or the functions `self.fn(...)` is bound to (with the imported table or function, if so)."""
        callee = self.resolve_call(call, scope) or self.module_call_target(call, scope)
        if callee is not None:
            return (callee,), None
        return self.attribute_functions(call, scope)

    def call_edges(
        self, function: FunctionInfo, tensor_arguments: Callable[[ast.Call], tuple[str, ...]] | None = None,
    ) -> tuple[list[FunctionInfo], list[ExternalRef]]:
        """What `function` calls: same-file functions, and calls that leave the file (with the
        arguments `tensor_arguments` says are tensors, for a call of a function)."""
        local: list[FunctionInfo] = []
        external: list[ExternalRef] = []
        for node in self._calls(function):
            targets = self._same_file_targets(node, function)
            if targets is not None:
                local.extend(targets[0])
                if targets[1] is not None:
                    external.append(_with_tensors(targets[1], node, tensor_arguments))
                continue
            ref = self.external_call(node, function)
            if ref is not None:
                external.append(_with_tensors(ref, node, tensor_arguments))
        return local, external

    def external_call(self, call: ast.Call, scope: FunctionInfo) -> ExternalRef | None:
        """The call as an `ExternalRef` when what it runs is defined in another file (or may be):
        an imported function, an instance of an imported class or one of its methods, or a
        method `self` inherits from a base class imported from elsewhere."""
        func = call.func
        if isinstance(func, ast.Name):
            instance = self._imported_instance(func, scope)
            return ExternalRef("instance", instance) if instance is not None else self._call_ref(func, scope)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        instance = self._imported_instance(func, scope)  # `self.block(x)`, `self.block = Block()`
        if instance is not None:
            return ExternalRef("instance", instance)
        owner = self._imported_instance(receiver, scope)  # `self.block.step(x)`, `block.step(x)`
        if owner is not None:
            return ExternalRef("method", owner, func.attr)
        cls = scope.method.owner if scope.method else None
        if cls is not None and (scope.is_self(receiver) or _is_super_call(receiver)):
            if scope.is_self(receiver) and (cls.find_method(func.attr) is not None or func.attr in self._class_attribute_instances(cls)):
                return None
            base = next((b for c in cls.mro() for b in c.base_names if b is not None and b not in self.index.classes
                         and _may_be_project_name(b)), None)
            return ExternalRef("method", base, func.attr) if base is not None else None
        return self._call_ref(func, scope)

    def _call_ref(self, func: ast.expr, scope: FunctionInfo | None) -> ExternalRef | None:
        qualname = self._qualified(func, scope)
        if qualname is None or not _may_be_project_name(qualname):
            return None
        return ExternalRef("call", qualname)


def _with_tensors(ref: ExternalRef, call: ast.Call, tensor_arguments: Callable[[ast.Call], tuple[str, ...]] | None) -> ExternalRef:
    if tensor_arguments is None or ref.kind not in ("call", "table"):
        return ref
    tensors = tensor_arguments(call)
    return ExternalRef(ref.kind, ref.target, ref.member, tensors) if tensors else ref


def compile_call_lines(text: str, lines: list[str], index: ModuleIndex) -> list[int]:
    """The 1-based lines where a compile call may start: `compile(`, `optimize(` and any name a
    compile function is imported as (`from torch import compile as c`: `c(`), or such a name at
    the end of a line. A superset, found by substring search and a regular expression on the lines
    that hold a name, instead of a walk of every function."""
    names = {"compile", "optimize"}
    scopes: list[dict[str, str]] = [index.imports, *(f.local_imports for f in index.all_functions)]
    names |= {name for scope in scopes for name, qualname in scope.items() if qualname in _COMPILE_FUNCTIONS}
    present = [name for name in names if name in text]
    if not present:
        return []  # most files: a substring search instead of a regular expression per line
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, present))) + r")\s*(?:\(|\\?$)")
    return [number for number, line in enumerate(lines, start=1) if any(name in line for name in present) and pattern.search(line)]


# Roots of qualified names that never name code of the project (the standard library, torch).
_NOT_PROJECT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "builtins"}


def _may_be_project_name(qualname: str) -> bool:
    return qualname.lstrip(".").split(".", 1)[0] not in _NOT_PROJECT


CUDA_GRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})  # the modes that turn on `triton.cudagraphs`


def cuda_graph_request(site: ast.AST) -> str | None:
    """How a compile site asks inductor to record CUDA graphs, in its own words
    (`mode="reduce-overhead"`, `options={"triton.cudagraphs": True}`), or None."""
    if not isinstance(site, ast.Call):
        return None
    mode = _keyword(site, "mode")
    if isinstance(mode, ast.Constant) and mode.value in CUDA_GRAPH_MODES:
        return f'mode="{mode.value}" at line {site.lineno}'
    options = _keyword(site, "options")
    if isinstance(options, ast.Dict):
        for key, value in zip(options.keys, options.values):
            if (isinstance(key, ast.Constant) and key.value == "triton.cudagraphs"
                    and isinstance(value, ast.Constant) and value.value is True):
                return f'options={{"triton.cudagraphs": True}} at line {site.lineno}'
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_super_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"
