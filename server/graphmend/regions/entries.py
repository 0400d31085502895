"""Compile sites and what they compile: `@torch.compile`, `torch.compile(target)`, `.compile()`,
every nn.Module `forward` by default, and entries other files' compile sites give this one;
with the Dynamo settings each entry runs under and its request for CUDA graphs."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterator

from ..semantics import ClassInfo, FunctionInfo, ModuleIndex, binding_scope
from .instances import Instances
from .patches import patched_settings, with_patches
from .records import (
    CAPTURE_SETTINGS,
    CUDA_GRAPH_MODES,
    FORCE_EAGER,
    FORWARD_IS_COMPILED,
    Entry,
    ExternalRef,
    ProjectContext,
)
from .resolution import CallResolution
from .scope_facts import UNKNOWN_VALUE, ScopeFacts, assigned_value, bound_names

_OPTIMIZE = "torch._dynamo.optimize"  # its arguments are options: `torch._dynamo.optimize("eager")(f)`
_COMPILE_FUNCTIONS = frozenset({"torch.compile", _OPTIMIZE})


def _guess_note(cls: ClassInfo) -> str:
    """Why a class whose bases graphmend cannot see is taken for an nn.Module (`ModuleIndex._unseen_base`)."""
    if cls.guessed_from is None:
        return ""
    return (
        f"; `{cls.name}` is taken for an nn.Module: it defines `forward` and its base `{cls.guessed_from}` "
        "is in no checked file (name such bases in the `module-bases` setting)"
    )


class EntryFinder:
    """The compiled entries of one module (see the module docstring), found when it is built:
    `entries`, and `remote_entries` (compile sites of this file aimed at code of other files)."""

    def __init__(
        self,
        index: ModuleIndex,
        facts: ScopeFacts,
        instances: Instances,
        resolution: CallResolution,
        context: ProjectContext,
        module_forward_is_compiled: bool,
        compile_lines: list[int] | None,
    ) -> None:
        """`compile_lines`: the sorted 1-based lines where a compile call can be (see
        `compile_call_lines`): only the functions that span one are searched for compile sites.
        None: search every function."""
        self.index = index
        self.facts = facts
        self.instances = instances
        self.resolution = resolution
        self.context = context
        self.module_forward_is_compiled = module_forward_is_compiled
        self.compile_lines = compile_lines
        self.remote_entries: list[tuple[ExternalRef, str, ast.AST]] = []
        self.entries = self._find_entries()

    def _find_entries(self) -> list[Entry]:
        entries: list[Entry] = []
        seen: set[int] = set()
        everywhere = self.module_level_captures()

        def add(
            function: FunctionInfo | None,
            why: str,
            site: ast.AST,
            captures: frozenset[str] = frozenset(),
            options: ast.AST | None = None,
        ) -> None:
            """`site`: the expression whose value is the compiled function (a fix wraps it);
            `options`: the call holding the compile options, when another (`compile_fn = torch.compile(...)`)."""
            if FORCE_EAGER in everywhere:
                return  # nothing compiles in a process that runs this file
            if function is not None and id(function.node) not in seen:
                seen.add(id(function.node))
                cuda_graphs = cuda_graph_request(options or site)
                entries.append(Entry(function, why, site, captures | everywhere, cuda_graphs=cuda_graphs))

        for function in self.index.all_functions:
            captures: set[str] = set()
            for decorator in function.node.decorator_list:
                if self._is_compile_callable(decorator, function.parent):
                    add(function, "decorated with @torch.compile", decorator, frozenset(captures))
                    break
                captures |= patched_settings(
                    self.index, decorator, function.parent
                )  # a patch above the compile wraps it

        self._compile_calls(add)

        if self.module_forward_is_compiled:
            for cls in self.index.classes.values():
                forward = cls.methods.get("forward")
                if cls.is_module and forward is not None:
                    add(forward, FORWARD_IS_COMPILED + _guess_note(cls), forward.node)
        for external in self.context.entries:
            reached = self.index.function_by_qualname(external.qualname)
            if reached is None or FORCE_EAGER in external.captures:
                continue
            entry = Entry(
                reached,
                external.why,
                reached.node,
                everywhere | external.captures,
                external.origin,
                external.via,
                external.called,
                external.cuda_graphs,
            )
            if id(reached.node) not in seen:
                seen.add(id(reached.node))
                entries.append(entry)
            elif external.cuda_graphs is not None or external.captures:
                # a real compile site asking for CUDA graphs, or under capture settings, beats the assumption
                assumed = next(i for i, e in enumerate(entries) if e.function is reached)
                if entries[assumed].why.startswith(FORWARD_IS_COMPILED):
                    entries[assumed] = entry
        return entries

    def _compile_calls(self, add: Callable[..., None]) -> None:
        """The compile sites that are calls (`torch.compile(f, ...)`, the options first, `m.compile()`):
        their entries through `add`, and in `remote_entries` those aimed at code of other files."""
        calls = list(self._scoped_calls())
        wrapped = with_patches(
            self.index, self.compile_lines
        )  # `with torch._dynamo.config.patch(...):` around the compile
        for scope, node in calls:  # `torch._dynamo.config.patch(...)(torch.compile(...))`
            if isinstance(node.func, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Call):
                inner = id(node.args[0])
                wrapped[inner] = wrapped.get(inner, frozenset()) | patched_settings(self.index, node.func, scope)
        for scope, node in calls:
            shadowed = scope.local_names if scope else frozenset()
            compiler = self._compiler_options(node.func, scope) if node.args else None
            if self.index.qualified_name(node.func, shadowed) == "torch.compile" or compiler is not None:
                # `torch.compile(f, ...)`, or options first: `torch.compile(backend=...)(f)`, `compile_fn(f)`
                target = node.args[0] if node.args else _keyword(node, "model")
                if target is not None:
                    why = f"compiled by torch.compile at line {node.lineno}"
                    compiled = self._compile_target(target, scope)
                    add(compiled, why, node, wrapped.get(id(node), frozenset()), compiler)
                    remote = None if compiled is not None else self._remote_target(target, scope)
                    if remote is not None:
                        self.remote_entries.append((remote, why, node))
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "compile" and not node.args:
                why = f"compiled by .compile() at line {node.lineno}"
                cls = self.instances.instance_class(node.func.value, scope)
                if cls is not None and cls.is_module:
                    add(cls.find_method("forward"), why, node)
                elif cls is None:
                    imported = self.instances.imported_instance(node.func.value, scope)
                    if imported is not None:
                        self.remote_entries.append((ExternalRef("instance", imported), why, node))

    def module_level_captures(self) -> frozenset[str]:
        """`torch._dynamo.config.capture_scalar_outputs = True` at module level: for every entry; and
        `torch.compiler.set_stance("force_eager")` (`FORCE_EAGER`)."""
        found = set()
        for stmt in self.index.tree.body:
            if _sets_force_eager(stmt, self.index):
                found.add(FORCE_EAGER)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is True:
                for target in stmt.targets:
                    qualname = self.index.qualified_name(target)
                    if qualname is not None and qualname.rsplit(".", 1)[0] == "torch._dynamo.config":
                        setting = qualname.rsplit(".", 1)[1]
                        if setting in CAPTURE_SETTINGS:
                            found.add(setting)
        return frozenset(found)

    def _is_compile_callable(self, decorator: ast.expr, scope: FunctionInfo | None) -> bool:
        """`@torch.compile`, `@torch.compile(...)`, and a name bound to options (`@compile_fn`)."""
        shadowed = scope.local_names if scope else frozenset()
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.index.qualified_name(func, shadowed) in _COMPILE_FUNCTIONS or (
            isinstance(decorator, ast.Name) and self._compiler_options(decorator, scope) is not None
        )

    def _compiler_options(self, expr: ast.expr, scope: FunctionInfo | None) -> ast.Call | None:
        """The compile call whose options `expr` applies when it is called on a function or module:
        `torch.compile(backend="eager")` itself (a compile call without a target returns a compiler),
        or a name bound, in the scope that binds it, only to one (`compile_fn = torch.compile(**opts)`)."""
        if isinstance(expr, ast.Call):
            shadowed = scope.local_names if scope else frozenset()
            qualname = self.index.qualified_name(expr.func, shadowed)
            if qualname == "functools.partial" and len(expr.args) == 1:  # `functools.partial(torch.compile, ...)`
                qualname = self.index.qualified_name(expr.args[0], shadowed)
                untargeted = qualname == "torch.compile" and _keyword(expr, "model") is None
            else:  # `torch._dynamo.optimize(...)` takes options only; `torch.compile(...)` without a target
                untargeted = qualname == _OPTIMIZE or (not expr.args and _keyword(expr, "model") is None)
            return expr if untargeted and qualname in _COMPILE_FUNCTIONS else None
        if not isinstance(expr, ast.Name):
            return None
        values = self._values(expr.id, scope)
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        return self._compiler_options(values[0], binding_scope(expr.id, scope))

    def _values(self, name: str, scope: FunctionInfo | None) -> list[ast.expr]:
        """The values `name = value` statements give `name` in the scope that binds it (empty if
        another binding, a parameter or an import, binds it there)."""
        binder = binding_scope(name, scope)
        if binder is None and (name in self.index.imports or name in self.index.functions):
            return []
        if binder is not None and name in binder.parameter_names:
            return []
        values = self.facts.assigned_values(binder).get(name, [])
        if UNKNOWN_VALUE in values:  # `opt_name, fn = None, f_info`: a tuple written out gives each its element
            assigns = [
                node
                for node in self.facts.bindings(binder)
                if isinstance(node, ast.Assign) and any(name in bound_names(t) for t in node.targets)
            ]
            elements = [assigned_value(node, name) for node in assigns]
            if len(elements) == len(values) and all(e is not None for e in elements):
                return [e for e in elements if e is not None]
        return values

    def _remote_target(self, target: ast.expr, scope: FunctionInfo | None) -> ExternalRef | None:
        """What `torch.compile(target)` compiles when it is defined in another file."""
        if isinstance(target, ast.Attribute):
            owner = self.instances.imported_instance(target.value, scope)
            if owner is not None:
                return ExternalRef("method", owner, target.attr)
            return self.resolution.call_ref(target, scope)
        instance = self.instances.imported_instance(target, scope)
        if instance is not None:
            return ExternalRef("instance", instance)
        return self.resolution.call_ref(target, scope) if isinstance(target, ast.Name) else None

    def _compile_target(self, target: ast.expr, scope: FunctionInfo | None, aliases: int = 3) -> FunctionInfo | None:
        """The same-file function or module `forward` `torch.compile(target)` compiles, through up to
        `aliases` names bound once to another (`fn = f_info`)."""
        if isinstance(target, ast.Name):
            function = self.resolution.resolve_function_name(target.id, scope)
            if function is not None:
                return function
            values = self._values(target.id, scope)
            if aliases and len(values) == 1 and isinstance(values[0], ast.Name):
                return self._compile_target(values[0], binding_scope(target.id, scope), aliases - 1)
        if isinstance(target, ast.Attribute):
            owner = self.instances.instance_class(target.value, scope)
            if owner is not None:
                return owner.find_method(target.attr)
            return None
        cls = self.instances.instance_class(target, scope)
        return cls.find_method("forward") if cls is not None and cls.is_module else None

    def _scoped_calls(self) -> Iterator[tuple[FunctionInfo | None, ast.Call]]:
        """The calls of every scope that may hold a compile site."""
        for call in self.facts.calls(None):
            yield None, call
        for function in self.index.all_functions:
            if self._may_compile(function):
                for call in self.facts.calls(function):
                    yield function, call

    def _may_compile(self, function: FunctionInfo) -> bool:
        if self.compile_lines is None:
            return True
        node = function.node
        first = bisect.bisect_left(self.compile_lines, node.lineno)
        return first < len(self.compile_lines) and self.compile_lines[first] <= (node.end_lineno or node.lineno)


def compile_call_lines(text: str, lines: list[str], index: ModuleIndex) -> list[int]:
    """The 1-based lines where a compile call may start: `compile(`, `optimize(`, any name a
    compile function is imported as (`from torch import compile as c`: `c(`) or bound to compile
    options as (`compile_fn = torch.compile(**opts)`: `compile_fn(`), or such a name at the end of
    a line. A superset, found by substring search and a regular expression on the lines
    that hold a name, instead of a walk of every function."""
    names = {"compile", "optimize"}
    scopes: list[dict[str, str]] = [index.imports, *(f.local_imports for f in index.all_functions)]
    names |= {name for scope in scopes for name, qualname in scope.items() if qualname in _COMPILE_FUNCTIONS}
    names |= {  # `compile_fn = torch.compile(**opts)` at the top level, called in a function later
        target.id
        for stmt in index.tree.body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
        if index.qualified_name(stmt.value.func) in _COMPILE_FUNCTIONS
        or (stmt.value.args and index.qualified_name(stmt.value.args[0]) in _COMPILE_FUNCTIONS)  # functools.partial
        for target in stmt.targets
        if isinstance(target, ast.Name)
    }
    present = [name for name in names if name in text]
    if not present:
        return []  # most files: a substring search instead of a regular expression per line
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, present))) + r")\s*(?:\(|\\?$)")
    return [
        number
        for number, line in enumerate(lines, start=1)
        if any(name in line for name in present) and pattern.search(line)
    ]


def cuda_graph_request(site: ast.AST) -> str | None:
    """How a compile site asks inductor to record CUDA graphs, in its own words
    (`mode="reduce-overhead"`, `options={"triton.cudagraphs": True}`), or None."""
    if not isinstance(site, ast.Call):
        return None
    if isinstance(site.func, ast.Call):  # the options first: `torch.compile(mode=...)(model)`
        site = site.func
    mode = _keyword(site, "mode")
    if isinstance(mode, ast.Constant) and mode.value in CUDA_GRAPH_MODES:
        return f'mode="{mode.value}" at line {site.lineno}'
    options = _keyword(site, "options")
    if isinstance(options, ast.Dict):
        for key, value in zip(options.keys, options.values):
            if (
                isinstance(key, ast.Constant)
                and key.value == "triton.cudagraphs"
                and isinstance(value, ast.Constant)
                and value.value is True
            ):
                return f'options={{"triton.cudagraphs": True}} at line {site.lineno}'
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _sets_force_eager(stmt: ast.stmt, index: ModuleIndex) -> bool:
    """`torch.compiler.set_stance("force_eager")` (or `stance="force_eager"`) as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
    if call is None or index.qualified_name(call.func) != "torch.compiler.set_stance":
        return False
    stance = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "stance"), None)
    return isinstance(stance, ast.Constant) and stance.value == FORCE_EAGER
