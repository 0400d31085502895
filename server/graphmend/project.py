"""Whole-project analysis: which functions of a file run compiled because of code in other files.

Dynamo traces every function a compiled frame calls, in whatever module it is defined, so a
`print` in `utils.py` breaks the graph of a `forward` in `model.py`. Each file is summarised on its
own (a `ModuleSummary`, cacheable by content): its imports, its classes with their bases, every
function with the same-file functions it calls and the calls that leave the file (`ExternalRef`s),
and its compile sites. A `Project` joins the summaries: it resolves qualified names across modules
(re-exports through `__init__.py` included), decides which classes are nn.Module subclasses through
bases defined in other files, follows calls from every compiled entry across files, and gives each
file a `ProjectContext`: its functions that compiled code of other files reaches (with the chain
that reaches them), and the imported bases that make its classes modules. With a library loader,
names no project file defines are looked up in installed packages (`libraries.py`), and reach goes
on there; a method reached on a base class also reaches the override of each class compiled code
calls instances of.
"""

from __future__ import annotations

import ast
import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from . import torch_api
from .analysis.call_facts import KindFacts
from .inference.compile_time import returned_compile_constant
from .libraries import MAX_LIBRARY_MODULES
from .regions import (
    FORWARD_IS_COMPILED,
    CalledFinding,
    CompiledRegions,
    ExternalEntry,
    ExternalRef,
    Origin,
    ProjectContext,
    cuda_graph_request,
)
from .semantics import (
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    init_bindings,
    is_module_base_qualname,
    may_be_unseen_module_base,
)
from .source import SourceText

_MAX_RE_EXPORTS = 8  # `from .a import X` chains followed when resolving a name
_TORCH_ROOTS = frozenset({"torch", "numpy"})  # packages whose names imported aliases may stand for
# The names such an alias is looked for under (kornia's `Tensor`, `zeros`, `Module`...): only these
# imports are followed, so that checking a file loads no module just to learn it defines a function.
_TORCH_NAMES = frozenset(
    {"Tensor", "BoolTensor", "LongTensor", "FloatTensor", "Parameter", "Module", "Size", "dtype", "device"}
    | {name.rsplit(".", 1)[-1] for name in torch_api.TENSOR_FUNCTIONS | torch_api.BOOL_TENSOR_FUNCTIONS}
)


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
    replayed: tuple[str, ...] = ()  # registered as reorderable logging functions: never traced
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
    for child in ast.walk(node):
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
    replayed = tuple(f.qualname for f in index.all_functions if id(f.node) in regions.replayed)
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
    )


_UNBOUNDED = 1 << 16  # `f(*args)`: any number of positional arguments


def _call_arguments(index: ModuleIndex) -> tuple[tuple[tuple[str, int, tuple[str, ...]], ...], tuple[str, ...]]:
    """The module's `arguments` and `escaped` (see `ModuleSummary`): which parameters of a
    library function some call passes, so that the project knows those no call does."""
    positional: dict[str, int] = {}
    keywords: dict[str, set[str]] = {}
    callees: set[int] = set()
    loaded: list[ast.Name | ast.Attribute] = []
    for node in ast.walk(index.tree):
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


# ---------------------------------------------------------------------------------------- project

_Key = tuple[str, str]  # (path, function qualname)


@dataclass(frozen=True)
class _Step:
    """How a function is reached: the entry it is reached from and the function before it."""

    entry: _Key
    why: str  # why the entry is compiled
    site: tuple[str, int] | None  # (path, index in its summary's entries) of the compile site; None: the entry's `def`
    previous: _Key | None


class Project:
    """The summaries of a set of files, joined: name resolution, module classes, reach."""

    def __init__(
        self, summaries: Iterable[ModuleSummary], load_library: Callable[[str], ModuleSummary | None] | None = None
    ) -> None:
        """`load_library` summarises an installed package's module by its dotted name (None: not
        installed, or not followed); the project calls it for a name no file of its own defines,
        so that reach goes on into the libraries compiled code calls (`libraries.py`)."""
        self.summaries: dict[str, ModuleSummary] = {}
        self._by_name: dict[str, list[ModuleSummary]] = {}
        self._classes: dict[str, dict[str, ClassSummary]] = {}
        self._tables: dict[str, dict[str, tuple[str, ...]]] = {}
        self._imports: dict[str, dict[str, str]] = {}
        for summary in sorted(summaries, key=lambda s: s.path):
            self._add(summary, summary.name)
        self._load_library = load_library
        self.library_paths: set[str] = set()  # the library modules loaded
        self._not_installed: set[str] = set()
        # Per reported file: findings of files not reported themselves that its calls lead to
        # (`library_calls.called_findings`, set by the front that decides which files are reported).
        self.called_findings: dict[str, tuple[CalledFinding, ...]] = {}
        self._tensor_parameters: dict[_Key, set[str]] | None = None
        self._is_module: dict[tuple[str, str], bool] = {}
        self._reached: dict[_Key, _Step] | None = None
        self._callers: dict[_Key, set[_Key]] | None = None
        self._overrides: dict[_Key, set[_Key]] = {}  # a base method → the overrides `reached` dispatched to
        self._passed: tuple[dict[str, tuple[int, set[str]]], set[str]] | None = None

    def _add(self, summary: ModuleSummary, name: str) -> None:
        self.summaries[summary.path] = summary
        if name:
            self._by_name.setdefault(name, []).append(summary)
        self._classes[summary.path] = {c.name: c for c in summary.classes}
        self._tables[summary.path] = dict(summary.tables)
        self._imports[summary.path] = dict(summary.imports)
        self._passed = None

    # ------------------------------------------------------------------ names
    def _module(self, name: str, importer: ModuleSummary | None) -> ModuleSummary | None:
        candidates = self._by_name.get(name)
        if not candidates:
            return self._library(name)
        if importer is not None and len(candidates) > 1:  # two files with one name: the importer's neighbour
            folder = Path(importer.path).parent
            return next((c for c in candidates if Path(c.path).parent == folder), candidates[0])
        return candidates[0]

    def _library(self, name: str) -> ModuleSummary | None:
        if self._load_library is None or name in self._not_installed or len(self.library_paths) >= MAX_LIBRARY_MODULES:
            return None
        summary = self._load_library(name)
        if summary is None or summary.path in self.summaries:
            self._not_installed.add(name)
            return None
        self.library_paths.add(summary.path)
        self._add(summary, name)
        return summary

    def resolve(
        self, qualname: str, importer: ModuleSummary | None = None, depth: int = 0
    ) -> tuple[str, ModuleSummary, str] | None:
        """What a qualified name defines in the project: ("function" | "class" | "table", module,
        qualname); a table is a module-level dict of functions."""
        if qualname.startswith(".") or depth > _MAX_RE_EXPORTS:
            return None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self._module(".".join(parts[:cut]), importer)
            if summary is not None:
                return self._member(summary, parts[cut:], depth)
        return None

    def _member(self, summary: ModuleSummary, attrs: list[str], depth: int) -> tuple[str, ModuleSummary, str] | None:
        head, rest = attrs[0], attrs[1:]
        classes = self._classes[summary.path]
        if head in classes:
            if not rest:
                return "class", summary, head
            if len(rest) == 1:
                method = self.find_method(summary, head, rest[0])
                return ("function", *method) if method is not None else None
            return None
        if not rest and summary.function(head) is not None:
            return "function", summary, head
        if not rest and head in self._tables[summary.path]:
            return "table", summary, head
        imports = self._imports[summary.path]
        imported = imports.get(head)
        if imported is not None:  # a re-export: `from .layers import Block` in a package's __init__
            return self.resolve(".".join([imported, *rest]), summary, depth + 1)
        for name, module in imports.items():  # `from .geometric import *`
            if name.startswith("*") and (found := self.resolve(".".join([module, *attrs]), summary, depth + 1)):
                return found
        return None

    def _class(self, qualname: str, importer: ModuleSummary) -> tuple[ModuleSummary, str] | None:
        if not importer.name and qualname[1:] in self._classes[importer.path]:  # a same-file base of a nameless file
            return importer, qualname[1:]
        found = self.resolve(qualname, importer)
        return (found[1], found[2]) if found is not None and found[0] == "class" else None

    def mro(self, summary: ModuleSummary, name: str) -> Iterator[tuple[ModuleSummary, ClassSummary]]:
        """The class, then its bases anywhere in the project, depth-first (enough for lookup)."""
        seen: set[tuple[str, str]] = set()
        stack = [(summary, name)]
        while stack:
            module, class_name = stack.pop(0)
            if (module.path, class_name) in seen or class_name not in self._classes[module.path]:
                continue
            seen.add((module.path, class_name))
            cls = self._classes[module.path][class_name]
            yield module, cls
            for base in cls.bases:
                found = self._class(base, module)
                if found is not None:
                    stack.append(found)

    def find_method(self, summary: ModuleSummary, class_name: str, method: str) -> tuple[ModuleSummary, str] | None:
        for module, cls in self.mro(summary, class_name):
            if method in cls.methods:
                return module, f"{cls.name}.{method}"
        return None

    def is_module_class(self, summary: ModuleSummary, class_name: str) -> bool:
        """An nn.Module subclass, through bases of any file of the project."""
        key = (summary.path, class_name)
        if key not in self._is_module:
            self._is_module[key] = False  # a cycle of bases is not a module
            cls = self._classes[summary.path].get(class_name)
            self._is_module[key] = cls is not None and (
                any(self._is_module_base(base, summary) for base in cls.bases)
                or self._guessed_module(summary, class_name)
            )
        return self._is_module[key]

    def _guessed_module(self, summary: ModuleSummary, class_name: str) -> bool:
        """`ModuleIndex`'s fallback across files: a class whose ancestry defines `forward` and has a
        base found in no checked file (nor in torch or the standard library) is taken for a module."""
        ancestry = list(self.mro(summary, class_name))
        return any("forward" in cls.methods for _, cls in ancestry) and any(
            not is_module_base_qualname(base) and self._class(base, module) is None and may_be_unseen_module_base(base)
            for module, cls in ancestry
            for base in cls.bases
        )

    def _is_module_base(self, base: str, importer: ModuleSummary) -> bool:
        if is_module_base_qualname(base):
            return True
        found = self._class(base, importer)
        return found is not None and self.is_module_class(*found)

    # ------------------------------------------------------------------ reach
    def targets(self, ref: ExternalRef, importer: ModuleSummary) -> list[_Key]:
        """The functions an `ExternalRef` of `importer` runs."""
        if ref.kind == "local":
            return [(importer.path, ref.target)]
        if ref.kind in ("call", "table"):
            found = self.resolve(ref.target, importer)
            if found is None:
                return []
            if found[0] == "table":
                return [(found[1].path, member) for member in self._tables[found[1].path][found[2]]]
            return [(found[1].path, found[2])] if found[0] == "function" else []
        cls = self._class(ref.target, importer)
        if cls is None:
            return []
        member = ref.member if ref.kind == "method" else ("forward" if self.is_module_class(*cls) else "__call__")
        method = self.find_method(*cls, member)
        return [(method[0].path, method[1])] if method is not None else []

    def reached(self) -> dict[_Key, _Step]:
        """Every function compiled code reaches, over all files. Crossing into another file costs
        one and a call within a file nothing (a 0-1 breadth-first search), so a function its own
        file's entries reach keeps that local chain, and another file is named only when needed.
        A method reached on a base class also reaches its overrides in the classes compiled code
        calls instances of (`self.compute_loss(...)` in a library's base `forward` runs the
        subclass's `compute_loss`): the search goes on until no new override is reached."""
        if self._reached is not None:
            return self._reached
        cost: dict[_Key, int] = {}
        reached: dict[_Key, _Step] = {}
        queue: deque[tuple[int, _Key]] = deque()
        instantiated: set[tuple[str, str]] = set()  # (path, class name) of the instances compiled code calls

        def relax(key: _Key, distance: int, step: _Step, front: bool) -> None:
            if key[1] in self.summaries[key[0]].replayed or cost.get(key, distance + 1) <= distance:
                return
            cost[key], reached[key] = distance, step
            (queue.appendleft if front else queue.append)((distance, key))

        for entry_key, step, distance in sorted(self._entries(), key=lambda e: (e[2], not self._says_how(e[1]))):
            relax(entry_key, distance, step, front=False)
        while queue:
            while queue:
                distance, key = queue.popleft()
                if distance > cost[key]:
                    continue
                summary = self.summaries[key[0]]
                function = summary.function(key[1])
                if function is None:
                    continue
                step = reached[key]
                following = _Step(step.entry, step.why, step.site, key)
                for ref in function.external:
                    if ref.kind in ("instance", "method"):
                        cls = self._class(ref.target, summary)
                        if cls is not None:
                            instantiated.add((cls[0].path, cls[1]))
                for callee_key in self._callees(summary, function):
                    crosses = callee_key[0] != summary.path
                    relax(callee_key, distance + crosses, following, front=not crosses)
            for base_key, override_key in self._dispatched(instantiated, reached):
                self._overrides.setdefault(base_key, set()).add(override_key)
                relax(override_key, cost[base_key] + (override_key[0] != base_key[0]), reached[base_key], front=False)
        self._reached = reached
        return reached

    def _callees(self, summary: ModuleSummary, function: FunctionSummary) -> Iterator[_Key]:
        """What a function calls: its own file's functions, then those its calls leaving the file run."""
        for callee in function.calls:
            yield summary.path, callee
        for ref in function.external:
            yield from self.targets(ref, summary)

    def _dispatched(self, instantiated: set[tuple[str, str]], reached: dict[_Key, _Step]) -> list[tuple[_Key, _Key]]:
        """(reached method of a base class, the override an instantiated subclass runs instead) not reached yet."""
        found = []
        for path, class_name in sorted(instantiated):
            summary = self.summaries[path]
            for module, cls in list(self.mro(summary, class_name))[1:]:
                for method in cls.methods:
                    base_key = (module.path, f"{cls.name}.{method}")
                    if base_key not in reached:
                        continue
                    implementation = self.find_method(summary, class_name, method)
                    if implementation is None:
                        continue
                    override_key = (implementation[0].path, implementation[1])
                    if override_key != base_key and override_key not in reached:
                        found.append((base_key, override_key))
        return found

    def callers(self) -> dict[_Key, set[_Key]]:
        """Every reached function → the reached functions that call it (all of them: `reached`
        keeps one way in for each)."""
        if self._callers is None:
            found: dict[_Key, set[_Key]] = {}
            for key in self.reached():
                summary = self.summaries[key[0]]
                function = summary.function(key[1])
                for callee_key in self._callees(summary, function) if function is not None else ():
                    found.setdefault(callee_key, set()).add(key)
            for base_key, overrides in self._overrides.items():  # an override runs where its base is called
                for override_key in overrides:
                    found.setdefault(override_key, set()).update(found.get(base_key, ()))
            self._callers = found
        return self._callers

    def tensor_parameters(self) -> dict[_Key, set[str]]:
        """Parameters that compiled code passes tensors, over every reached call of a function of
        another file (`ExternalRef.tensors`), whatever the callee's annotation says."""
        if self._tensor_parameters is not None:
            return self._tensor_parameters
        found: dict[_Key, set[str]] = {}
        for key in self.reached():
            summary = self.summaries[key[0]]
            function = summary.function(key[1])
            for ref in function.external if function is not None else ():
                if not ref.tensors:
                    continue
                for callee_key in self.targets(ref, summary):
                    callee = self.summaries[callee_key[0]].function(callee_key[1])
                    if callee is None:
                        continue
                    for label in ref.tensors:
                        name = (
                            callee.parameters[int(label)]
                            if label.isdigit() and int(label) < callee.positional
                            else label
                        )
                        if name in callee.parameters:
                            found.setdefault(callee_key, set()).add(name)
        self._tensor_parameters = found
        return found

    def _verdict(self, qualname: str, importer: ModuleSummary) -> tuple[str | None, str | None] | None:
        """Purity of the function (or table of functions) `qualname` names, from its summary."""
        found = self.resolve(qualname, importer)
        if found is None or found[0] not in ("function", "table"):
            return None
        members = self._tables[found[1].path][found[2]] if found[0] == "table" else (found[2],)
        caveat = None
        for member in members:
            function = found[1].function(member)
            if function is None or not function.purity:
                return None
            if function.purity != "pure":
                return f"calls `{member}`, which {function.purity.removeprefix('a branch ')}", None
            caveat = caveat or function.caveat or None
        return None, caveat

    def _says_how(self, step: _Step) -> bool:
        """The compile site of `step` says how it compiles: CUDA graphs, or capture settings."""
        return self._cuda_graph_request(step) is not None or (
            step.site is not None and bool(self.summaries[step.site[0]].captures)
        )

    def _cuda_graph_request(self, step: _Step) -> str | None:
        """How the compile site of `step` asks for CUDA graphs (None: it does not, or it is a `def`)."""
        return self.summaries[step.site[0]].entries[step.site[1]].cuda_graphs if step.site is not None else None

    def _entries(self) -> Iterator[tuple[_Key, _Step, int]]:
        """Compiled entries, each with its cost: 0 in its own file, 1 for a compile site aimed at
        another file, except that one asking for CUDA graphs, or in a file that sets Dynamo capture
        settings at module level, costs 0 too (and comes first among equals): the mode it compiles
        in decides what the GM4xx rules say there, the settings which values break."""
        for summary in list(self.summaries.values()):  # resolving a target may load a library module
            if summary.path in self.library_paths:
                continue  # what a library compiles itself is not the user's code
            for number, entry in enumerate(summary.entries):
                why = entry.why if entry.target.kind == "local" else f"{entry.why} of {summary.file_name}"
                for target in self.targets(entry.target, summary):
                    if self.summaries[target[0]].function(target[1]) is not None:
                        cost = int(target[0] != summary.path and entry.cuda_graphs is None and not summary.captures)
                        yield target, _Step(target, why, (summary.path, number), None), cost
            if summary.forward_is_compiled:  # modules through bases of other files
                for cls in summary.classes:
                    if "forward" in cls.methods and self.is_module_class(summary, cls.name):
                        function = summary.function(f"{cls.name}.forward")
                        if function is not None:
                            key = (summary.path, function.qualname)
                            yield key, _Step(key, FORWARD_IS_COMPILED, None, None), 0

    def context_for(self, path: str) -> ProjectContext:
        """What the rest of the project says about the file at `path`."""
        summary = self.summaries.get(path)
        if summary is None:
            return ProjectContext()
        reached = self.reached()
        entries = []
        for function in summary.functions:
            key = (path, function.qualname)
            step = reached.get(key)
            if step is None:
                continue
            from_elsewhere = step.previous[0] != path if step.previous is not None else self._origin(step).path != path
            if from_elsewhere:
                entries.append(self._external_entry(key, step))
        foreign = sorted(
            {base for cls in summary.classes for base in cls.bases if not base.startswith(f"{summary.name}.")}
        )
        bases: set[str] = set()
        plain: set[str] = set()
        attributes = []
        for base in foreign:  # each resolved once: is it a module, and what its constructors bind
            found = self._class(base, summary)
            if found is None:
                continue
            if not is_module_base_qualname(base):
                (bases if self.is_module_class(*found) else plain).add(base)
            bound = frozenset(name for _, cls in self.mro(*found) for name in cls.init_attributes)
            if bound:
                attributes.append((base, bound))
        verdicts = []  # for the functions (and tables) of other files this file calls: what a rewrite may run
        guards = []  # ... and those that return a value fixed under compile
        called = {ref.target for f in summary.functions for ref in f.external if ref.kind in ("call", "table")}
        for qualname in sorted(called):
            verdict = self._verdict(qualname, summary)
            if verdict is not None:
                verdicts.append((qualname, *verdict))
            guard = self._compile_constant(qualname, summary)
            if guard is not None:
                guards.append((qualname, guard))
        replaced = tuple(
            (cls.name, decorator)
            for cls in summary.classes
            if "forward" in cls.methods
            for decorator in cls.decorators
            if self._replaces_forward(decorator, summary)
        )
        given = self.tensor_parameters()
        tensors = tuple(
            sorted(
                (f.qualname, frozenset(given[(path, f.qualname)]))
                for f in summary.functions
                if (path, f.qualname) in given
            )
        )
        return ProjectContext(
            tuple(entries),
            frozenset(bases),
            tuple(attributes),
            tuple(verdicts),
            tensors,
            frozenset(plain),
            replaced,
            tuple(guards),
            self.called_findings.get(path, ()),
            self._torch_aliases(summary),
            self._unpassed_parameters(summary) if path in self.library_paths else (),
        )

    def _unpassed_parameters(self, summary: ModuleSummary) -> tuple[tuple[str, frozenset[str]], ...]:
        """For the module-level functions of a library module: the parameters no call in the
        project passes (`_safe_divide(num, denom)` never given `zero_division`). Reach into a
        library goes only through the project's calls, so there they keep their defaults."""
        if self._passed is None:  # over the project's files and the library modules compiled code reaches
            passed: dict[str, tuple[int, set[str]]] = {}
            escaped: set[str] = set()
            reached = {path for path, _ in self.reached()}
            for other in self.summaries.values():
                if other.path in self.library_paths and other.path not in reached:
                    continue  # loaded only to resolve a name: none of its code runs compiled
                for name, count, given in other.arguments:
                    most, names = passed.get(name, (0, set()))
                    passed[name] = (max(most, count), names | set(given))
                escaped.update(other.escaped)
            self._passed = passed, escaped
        passed, escaped = self._passed
        found = []
        for function in summary.functions:
            name = function.qualname
            if "." in name or name in escaped or (summary.path, name) not in self.reached():
                continue
            most, keywords = passed.get(name, (0, set()))
            if "**" in keywords:
                continue
            unpassed = frozenset(
                parameter
                for position, parameter in enumerate(function.parameters)
                if (position >= function.positional or position >= most) and parameter not in keywords
            )
            if unpassed:
                found.append((name, unpassed))
        return tuple(found)

    def _torch_aliases(self, summary: ModuleSummary) -> tuple[tuple[str, str], ...]:
        """The file's imports of names torch calls by that name that another module binds to a
        torch name (`from kornia.core import Tensor`)."""
        found = []
        for name, qualname in summary.imports:
            if name.startswith("*") or qualname.split(".", 1)[0] in _TORCH_ROOTS or name not in _TORCH_NAMES:
                continue
            target = self.external_name(qualname, summary)
            if target is not None and target.split(".", 1)[0] in _TORCH_ROOTS:
                found.append((qualname, target))
        return tuple(sorted(set(found)))

    def external_name(self, qualname: str, importer: ModuleSummary | None = None, depth: int = 0) -> str | None:
        """The name outside the project that a qualified name comes to through re-exports and
        module-level aliases (`kornia.core.Tensor` → `torch.Tensor`); None when it is defined in the
        project or cannot be followed."""
        if qualname.startswith(".") or depth > _MAX_RE_EXPORTS:
            return None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self._module(".".join(parts[:cut]), importer)
            if summary is None:
                continue
            imported = self._imports[summary.path].get(parts[cut])
            if imported is None:
                return None
            return self.external_name(".".join([imported, *parts[cut + 1 :]]), summary, depth + 1)
        return qualname if depth else None

    def _compile_constant(self, qualname: str, importer: ModuleSummary) -> bool | None:
        found = self.resolve(qualname, importer)
        function = found[1].function(found[2]) if found is not None and found[0] == "function" else None
        return function.compile_constant if function is not None else None

    def _replaces_forward(self, decorator: str, importer: ModuleSummary) -> bool:
        found = self.resolve(decorator, importer)
        function = found[1].function(found[2]) if found is not None and found[0] == "function" else None
        return function is not None and function.replaces_forward

    def _external_entry(self, key: _Key, step: _Step) -> ExternalEntry:
        """The function at `key` as an entry of its file: why it is compiled, and the functions of
        other files on the way from the compiled entry."""
        cuda_graphs = self._cuda_graph_request(step)
        # the capture settings of the file that compiles it (module-level ones hold process-wide)
        captures = frozenset(self.summaries[step.site[0] if step.site is not None else step.entry[0]].captures)
        if step.previous is None:  # compiled by a compile site in another file
            return ExternalEntry(key[1], step.why, self._origin(step), cuda_graphs=cuda_graphs, captures=captures)
        entry_file = self.summaries[step.entry[0]].file_name
        why = f"reached from compiled `{self.dotted(step.entry)}` in {entry_file} ({step.why})"
        chain = []
        current: _Key | None = step.previous
        reached = self.reached()
        while current is not None and current != step.entry:
            chain.append(self.dotted(current))
            current = reached[current].previous
        return ExternalEntry(
            key[1],
            why,
            self._origin(step),
            tuple(reversed(chain)),
            called=True,
            cuda_graphs=cuda_graphs,
            captures=captures,
        )

    def _origin(self, step: _Step) -> Origin:
        """Where the entry of `step` is, read from the current summaries (positions may have moved
        since the reach was computed: see `replace`)."""
        if step.site is not None:
            site = self.summaries[step.site[0]].entries[step.site[1]]
            return Origin(step.site[0], site.line, site.character, site.end_character)
        function = self.summaries[step.entry[0]].function(step.entry[1])
        assert function is not None
        return Origin(step.entry[0], function.line, function.character, function.end_character)

    def replace(self, summary: ModuleSummary) -> bool:
        """Take a new summary of a file in place of the old one when only positions changed (the
        call graph is the same: the reach stays valid). False when the graph changed: then build
        a new Project."""
        old = self.summaries.get(summary.path)
        if old is None or graph_of(old) != graph_of(summary):
            return False
        self.summaries[summary.path] = summary
        return True

    def dotted(self, key: _Key) -> str:
        """A function as its module names it: `pkg.mod.Class.method`."""
        name = self.summaries[key[0]].name
        return f"{name}.{key[1]}" if name else key[1]


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


def context_key(context: ProjectContext) -> str:
    """A digest of a context, for caches: equal contexts give equal keys."""
    text = repr(
        (
            context.entries,
            sorted(context.module_bases),
            sorted(context.plain_bases),
            context.replaced_forwards,
            [(base, sorted(names)) for base, names in context.base_attributes],
            context.foreign_functions,
            [(name, sorted(names)) for name, names in context.tensor_parameters],
            context.compile_guards,
            context.called_findings,
            context.torch_aliases,
            [(name, sorted(names)) for name, names in context.unpassed_parameters],
        )
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------- storage


def summary_to_json(summary: ModuleSummary) -> dict[str, object]:
    """A plain form of a summary (for the on-disk cache: JSON, never pickle)."""
    return {
        "path": summary.path,
        "name": summary.name,
        "forward_is_compiled": summary.forward_is_compiled,
        "imports": [list(pair) for pair in summary.imports],
        "functions": [
            [
                f.qualname,
                f.line,
                f.character,
                f.end_character,
                list(f.calls),
                [[r.kind, r.target, r.member, list(r.tensors)] for r in f.external],
                list(f.parameters),
                f.positional,
                f.purity,
                f.caveat,
                f.replaces_forward,
                f.compile_constant,
            ]
            for f in summary.functions
        ],
        "classes": [
            [c.name, list(c.bases), list(c.methods), list(c.init_attributes), list(c.decorators)]
            for c in summary.classes
        ],
        "entries": [
            [
                e.target.kind,
                e.target.target,
                e.target.member,
                e.why,
                e.line,
                e.character,
                e.end_character,
                e.cuda_graphs,
            ]
            for e in summary.entries
        ],
        "replayed": list(summary.replayed),
        "tables": [[name, list(members)] for name, members in summary.tables],
        "captures": list(summary.captures),
        "arguments": [[name, count, list(names)] for name, count, names in summary.arguments],
        "escaped": list(summary.escaped),
    }


def summary_from_json(raw: dict) -> ModuleSummary:
    return ModuleSummary(
        raw["path"],
        raw["name"],
        raw["forward_is_compiled"],
        tuple((a, b) for a, b in raw["imports"]),
        tuple(
            FunctionSummary(
                q,
                line,
                start,
                end,
                tuple(calls),
                tuple(ExternalRef(kind, target, member, tuple(tensors)) for kind, target, member, tensors in external),
                tuple(parameters),
                positional,
                purity,
                caveat,
                replaces,
                constant,
            )
            for q, line, start, end, calls, external, parameters, positional, purity, caveat, replaces, constant in raw[
                "functions"
            ]
        ),
        tuple(
            ClassSummary(name, tuple(bases), tuple(methods), tuple(attributes), tuple(decorators))
            for name, bases, methods, attributes, decorators in raw["classes"]
        ),
        tuple(
            EntrySummary(ExternalRef(kind, target, member), why, line, start, end, cuda_graphs)
            for kind, target, member, why, line, start, end, cuda_graphs in raw["entries"]
        ),
        tuple(raw["replayed"]),
        tuple((name, tuple(members)) for name, members in raw["tables"]),
        tuple(raw["captures"]),
        tuple((name, count, tuple(names)) for name, count, names in raw["arguments"]),
        tuple(raw["escaped"]),
    )
