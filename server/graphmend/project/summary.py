"""One file's part of the project graph: a `ModuleSummary`, from its syntax alone.

Each file is summarised on its own, so that a summary can be cached by content: its imports, its
classes with their bases, every function with the same-file functions it calls and the calls that
leave the file (`ExternalRef`s), and its compile sites. `graph_of` is what of it the project's
reach depends on (positions left out).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..analysis.call_facts import KindFacts
from ..inference.compile_time import returned_compile_constant
from ..regions import CompiledRegions, ExternalRef, cuda_graph_request
from ..semantics import ClassInfo, FunctionInfo, ModuleIndex, init_bindings, walk
from ..source import SourceText


@dataclass(frozen=True)
class FunctionSummary:
    qualname: str
    line: int  # the name in the `def` line, 0-based
    character: int
    end_character: int
    calls: tuple[str, ...]  # same-file functions it calls (qualnames)
    external: tuple[ExternalRef, ...]  # calls that leave the file
    parameters: tuple[str, ...] = ()  # positional ones first, then keyword-only
    positional: int = 0  # how many of `parameters` can be passed by position
    # A module-level function's purity for other files' rewrites: "" not judged, "pure", or why not.
    purity: str = ""
    caveat: str = ""  # with "pure": what running it unconditionally may still do (`purity.call_caveat`)
    # A module-level function that sets `forward` on an object it is given (a class decorator that
    # swaps the method at run time: transformers 5.x's `use_experts_implementation`).
    replaces_forward: bool = False
    # A module-level function whose body returns a value fixed under compile: that value, else None.
    compile_constant: bool | None = None


@dataclass(frozen=True)
class ClassSummary:
    name: str
    bases: tuple[str, ...]  # qualified names; a same-file base as "<module>.<name>"
    methods: tuple[str, ...]
    init_attributes: tuple[str, ...] = ()  # what its own `__init__` binds on the instance
    decorators: tuple[str, ...] = ()  # qualified names of its class decorators (`@d(...)` as `d`)


@dataclass(frozen=True)
class EntrySummary:
    """A compile site: `target` is `ExternalRef("local", qualname)` for a function of this file."""

    target: ExternalRef
    why: str
    line: int
    character: int
    end_character: int
    cuda_graphs: str | None = None  # how the site asks for CUDA graphs (`regions.cuda_graph_request`)


@dataclass(frozen=True)
class ModuleSummary:
    path: str
    name: str  # dotted module name ("" when it cannot be imported by name)
    forward_is_compiled: bool
    imports: tuple[tuple[str, str], ...] = ()
    functions: tuple[FunctionSummary, ...] = ()
    classes: tuple[ClassSummary, ...] = ()
    entries: tuple[EntrySummary, ...] = ()
    replayed: tuple[str, ...] = ()  # never traced: registered as reorderable logging functions, or disabled
    tables: tuple[tuple[str, tuple[str, ...]], ...] = ()  # module-level dicts of its functions
    # Dynamo capture settings set at module level (`torch._dynamo.config.capture_scalar_outputs = True`):
    # they hold for the whole process, so for what this file's compile sites compile in other files too.
    captures: tuple[str, ...] = ()
    # Per name its calls use (`f(...)`, `mod.f(...)`): the most positional arguments one passes and
    # every keyword any passes (`*args` counts as unbounded, `**kw` as the keyword "**").
    arguments: tuple[tuple[str, int, tuple[str, ...]], ...] = ()
    # Imported names and functions of this file used other than by calling them (`partial(f, ...)`,
    # `table = {"a": f}`): what they are called with cannot be seen.
    escaped: tuple[str, ...] = ()
    # Functions decorated with `torch.compiler.disable` (not replayed): a call from compiled code splits the graph.
    disabled: tuple[str, ...] = ()
    _by_qualname: dict[str, FunctionSummary] = field(default_factory=dict, compare=False, repr=False)

    def function(self, qualname: str) -> FunctionSummary | None:
        if not self._by_qualname and self.functions:
            self._by_qualname.update((f.qualname, f) for f in self.functions)
        return self._by_qualname.get(qualname)

    @property
    def file_name(self) -> str:
        return Path(self.path).name


def summarize(
    tree: ast.Module, source: SourceText, path: Path, module_name: str | None, forward_is_compiled: bool
) -> ModuleSummary:
    """One file's part of the project graph (from its syntax alone)."""
    index = ModuleIndex(tree, module_name, is_package=path.name == "__init__.py", may_have_walrus=":=" in source.text)
    return summarize_module(index, CompiledRegions(index, forward_is_compiled), source, path, forward_is_compiled)


def _replaces_forward(node: ast.AST) -> bool:
    """`x.forward = ...` (x not `self`) or `setattr(x, "forward", ...)` anywhere in the function."""
    for child in walk(node):
        if isinstance(child, ast.Assign):
            if any(
                isinstance(t, ast.Attribute)
                and t.attr == "forward"
                and not (isinstance(t.value, ast.Name) and t.value.id == "self")
                for t in child.targets
            ):
                return True
        elif (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Name)
            and child.func.id == "setattr"
            and len(child.args) == 3
            and isinstance(child.args[1], ast.Constant)
            and child.args[1].value == "forward"
        ):
            return True
    return False


def _decorators(index: ModuleIndex, cls: ClassInfo) -> tuple[str, ...]:
    names = (index.qualified_name(d.func if isinstance(d, ast.Call) else d) for d in cls.node.decorator_list)
    return tuple(n for n in names if n is not None)


def _init_attributes(cls: ClassInfo) -> tuple[str, ...]:
    init = cls.methods.get("__init__")
    return tuple(dict.fromkeys(name for name, _ in init_bindings(init))) if init is not None else ()


def summarize_module(
    index: ModuleIndex, regions: CompiledRegions, source: SourceText, path: Path, forward_is_compiled: bool
) -> ModuleSummary:
    """The summary from a file's index and its regions computed with no project context."""
    name = index.module_name or ""
    functions = []
    facts = KindFacts(index, regions)
    for function in index.all_functions:
        local, external = regions.call_edges(function, partial(facts.tensor_arguments, function))
        line, character, end = _name_position(function, source)
        args = function.node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        purity, caveat = facts.purity(function) if function.owner is None and function.parent is None else ("", "")
        functions.append(
            FunctionSummary(
                function.qualname,
                line,
                character,
                end,
                tuple(dict.fromkeys(f.qualname for f in local)),
                tuple(dict.fromkeys(external)),
                (*positional, *(a.arg for a in args.kwonlyargs)),
                len(positional),
                purity,
                caveat,
                function.owner is None and function.parent is None and _replaces_forward(function.node),
                returned_compile_constant(function, partial(_qualified_or_own, index))
                if function.owner is None and function.parent is None
                else None,
            )
        )
    classes = tuple(
        ClassSummary(
            cls.name,
            tuple(f"{name}.{b}" if b in index.classes else b for b in cls.base_names if b is not None),
            tuple(cls.methods),
            _init_attributes(cls),
            _decorators(index, cls),
        )
        for cls in index.classes.values()
    )
    entries = [
        EntrySummary(
            ExternalRef("local", entry.function.qualname),
            entry.why,
            *_site_position(entry.site, entry.function, source),
            entry.cuda_graphs,
        )
        for entry in regions.entries
    ]
    entries += [
        EntrySummary(ref, why, *_site_position(site, None, source), cuda_graph_request(site))
        for ref, why, site in regions.remote_entries
    ]
    replayed = tuple(f.qualname for f in index.all_functions if regions.untraced(f))
    return ModuleSummary(
        str(path),
        name,
        forward_is_compiled,
        (*index.imports.items(), *_star_imports(index)),
        tuple(functions),
        classes,
        tuple(entries),
        replayed,
        tuple(index.function_tables.items()),
        tuple(sorted(regions.module_level_captures())),
        *_call_arguments(index),
        disabled=tuple(
            f.qualname
            for f in index.all_functions
            if id(f.node) in regions.disabled and id(f.node) not in regions.replayed
        ),
    )


_UNBOUNDED = 1 << 16  # `f(*args)`: any number of positional arguments


def _call_arguments(index: ModuleIndex) -> tuple[tuple[tuple[str, int, tuple[str, ...]], ...], tuple[str, ...]]:
    """The module's `arguments` and `escaped` (see `ModuleSummary`): which parameters of a
    library function some call passes, so that the project knows those no call does."""
    positional: dict[str, int] = {}
    keywords: dict[str, set[str]] = {}
    callees: set[int] = set()
    loaded: list[ast.Name | ast.Attribute] = []
    for node in walk(index.tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            callees.add(id(func))
            if name is None:
                continue
            count = _UNBOUNDED if any(isinstance(a, ast.Starred) for a in node.args) else len(node.args)
            positional[name] = max(positional.get(name, 0), count)
            keywords.setdefault(name, set()).update(k.arg or "**" for k in node.keywords)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            loaded.append(node)
    escaped = {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in loaded
        if id(node) not in callees
        and (
            (isinstance(node, ast.Name) and (node.id in index.imports or node.id in index.functions))
            or (isinstance(node, ast.Attribute) and index.qualified_name(node) is not None)
        )
    }
    arguments = tuple((name, positional[name], tuple(sorted(keywords[name]))) for name in sorted(positional))
    return arguments, tuple(sorted(escaped))


def _star_imports(index: ModuleIndex) -> list[tuple[str, str]]:
    """`from pkg.sub import *` at module level, as imports named `*1`, `*2`... (names no code can
    bind): the project looks a name up in those modules when the file defines no such name."""
    found: list[tuple[str, str]] = []
    for stmt in index.tree.body:
        if isinstance(stmt, ast.ImportFrom) and any(alias.name == "*" for alias in stmt.names):
            module = index.resolve_relative(stmt.module, stmt.level)
            if module and not module.startswith("."):
                found.append((f"*{len(found) + 1}", module))
    return found


def _qualified_or_own(index: ModuleIndex, node: ast.expr) -> str | None:
    """A name's qualified name, a module-level function of this file's included
    (`transformers.utils.import_utils.is_torchdynamo_compiling` inside that module)."""
    found = index.qualified_name(node)
    if found is None and isinstance(node, ast.Name) and node.id in index.functions and index.module_name:
        return f"{index.module_name}.{node.id}"
    return found


def _name_position(function: FunctionInfo, source: SourceText) -> tuple[int, int, int]:
    """Where the function's name is in its `def` line: 0-based line, columns in code points."""
    node = function.node
    start = source.position(node.lineno, node.col_offset)
    line = source.lines[start.line] if start.line < len(source.lines) else ""
    column = line.find(node.name, start.character)
    column = column if column >= 0 else start.character
    return start.line, column, column + len(node.name)


def _site_position(site: ast.AST, function: FunctionInfo | None, source: SourceText) -> tuple[int, int, int]:
    if function is not None and site is function.node:
        return _name_position(function, source)
    found = source.node_range(site)
    end = found.end.character if found.end.line == found.start.line else found.start.character
    return found.start.line, found.start.character, end


def graph_of(summary: ModuleSummary) -> tuple[object, ...]:
    """A summary without positions: what the project's reach depends on."""
    return (
        summary.name,
        summary.forward_is_compiled,
        summary.imports,
        summary.classes,
        summary.replayed,
        tuple(
            (f.qualname, f.calls, f.external, f.parameters, f.positional, f.purity, f.caveat, f.compile_constant)
            for f in summary.functions
        ),
        tuple((e.target, e.why) for e in summary.entries),
        summary.tables,
        summary.captures,
        summary.arguments,
        summary.escaped,
    )
