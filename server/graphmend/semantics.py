"""What names mean in one module: imports as qualified names, functions, classes, scopes.

Built once per file from `ast` in a single pass over the statements that define names, so that
"is `th` torch", "is this the builtin print" and "which method does `self._gate` call" are answered
by bindings, never by matching text.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, TypeVar

from .torch_api import IS_COMPILING_FUNCTIONS, LIBRARY_LOGGER_FACTORIES

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef

# Bases from outside the file known to be nn.Module subclasses (qualified names).
_MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)
# torch.nn classes that are not modules although capitalised.
_NN_NON_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})
# Packages whose classes graphmend knows, so a base from them is never taken for a module by guess
# (`torch.autograd.Function` defines `forward` too).
_KNOWN_PACKAGES = frozenset({"torch", "numpy", "typing_extensions", *sys.stdlib_module_names})
# Names of libraries that graphmend's tables know (and the packages above them), by their dotted tail:
# a relative import from a file outside any package (`from ...utils import is_torchdynamo_compiling`,
# code copied out of transformers) is read as the library name with the same tail.
_LIBRARY_NAMES = frozenset(
    name
    for name in (*IS_COMPILING_FUNCTIONS, *LIBRARY_LOGGER_FACTORIES, *_MODULE_BASES)
    if not name.startswith("torch.")
)
_LIBRARY_PREFIXES = frozenset(
    ".".join(parts[:cut]) for parts in map(lambda n: n.split("."), _LIBRARY_NAMES) for cut in range(2, len(parts) + 1)
)
# Libraries in the order a relative name that fits several of them is read as.
_LIBRARY_PREFERENCE = ("transformers", "diffusers", "accelerate", "huggingface_hub")


@dataclass
class FunctionInfo:
    node: FunctionNode
    qualname: str
    owner: ClassInfo | None = None
    parent: FunctionInfo | None = None
    nested: dict[str, FunctionInfo] = field(default_factory=dict)
    local_imports: dict[str, str] = field(default_factory=dict)  # `import torch` inside the body
    may_have_walrus: bool = True  # False when the file has no `:=`: no expression walk for its targets

    @property
    def name(self) -> str:
        return self.node.name

    @cached_property
    def method(self) -> FunctionInfo | None:
        """The method this function is, or is nested in (None for plain functions)."""
        current: FunctionInfo | None = self
        while current is not None and current.owner is None:
            current = current.parent
        return current

    @cached_property
    def self_name(self) -> str | None:
        """The name of the enclosing method's instance parameter (`self`), if it has one."""
        method = self.method
        if method is None:
            return None
        args = method.node.args
        positional = [*args.posonlyargs, *args.args]
        decorators = {d.id for d in method.node.decorator_list if isinstance(d, ast.Name)}
        if not positional or decorators & {"staticmethod", "classmethod"}:
            return None
        return positional[0].arg

    def is_self(self, expr: ast.expr) -> bool:
        return self.self_name is not None and isinstance(expr, ast.Name) and expr.id == self.self_name

    @cached_property
    def parameter_names(self) -> frozenset[str]:
        """Its named parameters (positional-only, positional, keyword-only; not `*args`/`**kwargs`)."""
        args = self.node.args
        return frozenset(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))

    @cached_property
    def local_names(self) -> frozenset[str]:
        """Names bound in this function's own scope (parameters, assignments, imports, defs)."""
        return _local_names(self.node, self.may_have_walrus)

    @cached_property
    def declared_outer(self) -> frozenset[str]:
        """Names its own body declares `global` or `nonlocal` (not among `local_names`)."""
        return frozenset(
            name
            for stmt in _scope_statements(self.node.body)
            if isinstance(stmt, (ast.Global, ast.Nonlocal))
            for name in stmt.names
        )


def binding_scope(name: str, scope: FunctionInfo | None) -> FunctionInfo | None:
    """The function whose own scope binds `name` as `scope` sees it, lexically (None: the module)."""
    while scope is not None and name not in scope.local_names:
        scope = scope.parent
    return scope


@dataclass
class ClassInfo:
    node: ast.ClassDef
    base_names: list[str | None]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    bases: list[ClassInfo] = field(default_factory=list)
    is_module: bool = False
    # When `is_module` is a guess (a base graphmend cannot see, and a `forward`): that base.
    guessed_from: str | None = None

    @property
    def name(self) -> str:
        return self.node.name

    def mro(self) -> Iterator[ClassInfo]:
        """This class, then its same-file bases depth-first (good enough for method lookup)."""
        seen: set[int] = set()
        stack = [self]
        while stack:
            cls = stack.pop(0)
            if id(cls) in seen:
                continue
            seen.add(id(cls))
            yield cls
            stack.extend(cls.bases)

    def find_method(self, name: str) -> FunctionInfo | None:
        for cls in self.mro():
            if name in cls.methods:
                return cls.methods[name]
        return None


def init_bindings(init: FunctionInfo) -> Iterator[tuple[str, ast.expr | ast.Pass | None]]:
    """What an `__init__` binds on its instance, in order: `(name, value)` for `self.name = value`,
    `(name, None)` for `register_buffer`/`register_parameter` by a literal name, and `(name,
    BOUND)` for every other store to `self.name` (the target of the assignments above included:
    unpacking, augmented assignment)."""
    for node in walk(init.node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and init.is_self(target.value):
                    yield target.attr, node.value
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and init.is_self(node.value):
            yield node.attr, BOUND
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("register_buffer", "register_parameter")
            and init.is_self(node.func.value)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, None


BOUND = ast.Pass()  # `init_bindings`: bound, with no single value


def self_stores(cls: ClassInfo, attribute: str) -> Iterator[tuple[FunctionInfo, ast.expr]]:
    """Every place in the class (and its same-file bases) that binds `self.<attribute>`: a store
    target (assignment, augmented assignment, unpacking) or `register_buffer`/`register_parameter`."""
    for klass in cls.mro():
        for method in klass.methods.values():
            for node in walk(method.node):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and node.attr == attribute
                    and method.is_self(node.value)
                ):
                    yield method, node
                elif (
                    isinstance(node, ast.Call)
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value == attribute
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("register_buffer", "register_parameter")
                    and method.is_self(node.func.value)
                ):
                    yield method, node


def module_name_for(path: Path | None) -> str | None:
    """The dotted module name of a file, found by walking up through packages (`__init__.py`)."""
    if path is None:
        return None
    try:
        path = path.resolve()
    except OSError:
        return None
    parts = [path.stem] if path.stem != "__init__" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    return ".".join(parts) if parts else None


_DICT_MUTATORS = frozenset({"update", "setdefault", "__setitem__"})


class ModuleIndex:
    """Bindings of a module: imports, module-level names, functions and classes."""

    def __init__(
        self,
        tree: ast.Module,
        module_name: str | None = None,
        is_package: bool = False,
        module_bases: frozenset[str] = frozenset(),
        may_have_walrus: bool = True,
        plain_bases: frozenset[str] = frozenset(),
        foreign_aliases: Mapping[str, str] | None = None,
    ) -> None:
        self.tree = tree
        self.may_have_walrus = may_have_walrus  # the checker passes `":=" in text`
        # Imported bases known to be nn.Module subclasses: by the project, or named in `module-bases`.
        self.module_bases = module_bases
        self.plain_bases = plain_bases  # imported bases the project found and knows are not modules
        # Imported names the project found to be another module's alias of a torch name
        # (`from kornia.core import Tensor`, where kornia binds `Tensor = torch.Tensor`) → that name.
        self.foreign_aliases: Mapping[str, str] = foreign_aliases or {}
        self.module_name = module_name
        self.is_package = is_package
        self.imports: dict[str, str] = {}
        self.module_names: set[str] = set()  # every name bound at module level
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.all_functions: list[FunctionInfo] = []
        self._by_qualname: dict[str, FunctionInfo] | None = None
        self.function_tables: dict[str, tuple[str, ...]] = {}
        self._index_module()

    # ----------------------------------------------------------------- building
    def _index_module(self) -> None:
        self._class_names = {s.name for s in _scope_statements(self.tree.body) if isinstance(s, ast.ClassDef)}
        for stmt in _scope_statements(self.tree.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.imports.update(self.import_bindings(stmt))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = self._add_function(stmt, stmt.name, None, None)
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = self._add_class(stmt, stmt.name)
        for name in _rebound_functions(self.tree, self.functions, self.declared_global):
            del self.functions[name]  # its `def` is not what a call of it runs (`scale = _noisy`)
        self.module_names = set(_local_names(self.tree, self.may_have_walrus))
        self.imports.update(self._module_aliases())
        for cls in self.classes.values():
            cls.bases = [self.classes[n] for n in cls.base_names if n is not None and n in self.classes]
        for cls in self.classes.values():
            cls.is_module = self._is_module_class(cls, set())
        for cls in self.classes.values():
            if not cls.is_module:
                cls.guessed_from = self._unseen_base(cls)
                cls.is_module = cls.guessed_from is not None
        self.function_tables = _function_tables(self.tree, self.functions)

    @cached_property
    def declared_global(self) -> frozenset[str]:
        """Names a function of the module declares `global`: it may rebind them to anything."""
        return frozenset(name for n in walk(self.tree) if isinstance(n, ast.Global) for name in n.names)

    @cached_property
    def rebound_names(self) -> frozenset[str]:
        """Module-level names something other than an import binds or deletes (`_rebound_names`)."""
        return _rebound_names(self.tree, self.declared_global, self.may_have_walrus)

    def _module_aliases(self) -> dict[str, str]:
        """Module-level names bound once, at the top level, to an imported name (`Tensor =
        torch.Tensor`, `F = torch.nn.functional`): they mean what an import would, here and in the
        modules that import them (the summary exports them with the imports)."""
        candidates: dict[str, str] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                qualname = self.qualified_name(stmt.value) if name not in self.imports else None
                if qualname is not None:
                    candidates[name] = qualname
        if not candidates:
            return {}
        bindings = Counter(
            n.id
            for stmt in _scope_statements(self.tree.body)
            for target in _binding_targets(stmt)
            for n in walk(target)
            if isinstance(n, ast.Name)
        )
        return {
            name: qualname
            for name, qualname in candidates.items()
            if bindings[name] == 1
            and name not in self.declared_global
            and name not in self.functions
            and name not in self.classes
        }

    def _add_function(
        self, node: FunctionNode, qualname: str, owner: ClassInfo | None, parent: FunctionInfo | None
    ) -> FunctionInfo:
        info = FunctionInfo(
            node=node, qualname=qualname, owner=owner, parent=parent, may_have_walrus=self.may_have_walrus
        )
        self.all_functions.append(info)
        for stmt in _scope_statements(node.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                info.local_imports.update(self.import_bindings(stmt))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.nested[stmt.name] = self._add_function(stmt, f"{qualname}.{stmt.name}", None, info)
        return info

    def _add_class(self, node: ast.ClassDef, qualname: str) -> ClassInfo:
        cls = ClassInfo(node=node, base_names=[self._base_name(b) for b in node.bases])
        for stmt in _scope_statements(node.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                cls.methods[stmt.name] = self._add_function(stmt, f"{qualname}.{stmt.name}", cls, None)
        return cls

    def _base_name(self, base: ast.expr) -> str | None:
        if isinstance(base, ast.Name) and base.id in self._class_names:
            return base.id
        return self.qualified_name(base)

    def _is_module_class(self, cls: ClassInfo, visiting: set[int]) -> bool:
        if id(cls) in visiting:
            return False
        visiting.add(id(cls))
        for name in cls.base_names:
            if name is None:
                continue
            if name in self.classes:
                if self._is_module_class(self.classes[name], visiting):
                    return True
            elif is_module_base_qualname(name) or name_in(name, self.module_bases):
                return True
        return False

    def _unseen_base(self, cls: ClassInfo) -> str | None:
        """The fallback for bases graphmend cannot see (a package not among the checked files, a
        relative import outside any package): a class that defines `forward` as a method (itself or
        a same-file base) and has such a base is taken for an nn.Module. Returns that base."""
        ancestry = list(cls.mro())
        if not any(_is_instance_method(c.methods.get("forward")) for c in ancestry):
            return None
        for c in ancestry:
            for name in c.base_names:
                if (
                    name is not None
                    and name not in self.classes
                    and name not in self.plain_bases
                    and may_be_unseen_module_base(name)
                ):
                    return name
        return None

    def import_bindings(self, stmt: ast.Import | ast.ImportFrom) -> dict[str, str]:
        """Name → qualified name for one import statement (relative imports resolved when possible)."""
        bound: dict[str, str] = {}
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    bound[top] = top
            return bound
        base = self.resolve_relative(stmt.module, stmt.level)
        for alias in stmt.names:
            if alias.name == "*":
                continue
            name = f"{base}.{alias.name}" if base else alias.name
            bound[alias.asname or alias.name] = library_name_for(name) if name.startswith(".") else name
        return bound

    def resolve_relative(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        if self.module_name:
            package_parts = self.module_name.split(".")
            if not self.is_package:
                package_parts = package_parts[:-1]
            drop = level - 1
            if drop <= len(package_parts):
                anchor = package_parts[: len(package_parts) - drop]
                return ".".join([*anchor, module] if module else anchor)
        # Unknown package: keep the relative marker so the name can never pass for an absolute one.
        return "." * level + (module or "")

    # ----------------------------------------------------------------- queries
    def function_by_qualname(self, qualname: str) -> FunctionInfo | None:
        """`Block.forward` → its FunctionInfo (the first definition of that name)."""
        if self._by_qualname is None:
            self._by_qualname = {}
            for function in self.all_functions:
                self._by_qualname.setdefault(function.qualname, function)
        return self._by_qualname.get(qualname)

    def qualified_name(
        self,
        expr: ast.expr,
        shadowed: frozenset[str] | set[str] = frozenset(),
        local_imports: dict[str, str] | None = None,
    ) -> str | None:
        """`th.nn.functional.relu` → "torch.nn.functional.relu" when `th` is an imported module alias.

        Returns None when the root name is not an import (or is shadowed by a local binding that is
        not itself an import).
        """
        chain = attribute_chain(expr)
        if chain is None:
            return None
        name, attrs = chain
        if local_imports and name in local_imports:
            root: str | None = local_imports[name]
        elif name in shadowed:
            return None
        else:
            root = self.imports.get(name)
        if root is None:
            return None
        root = self.foreign_aliases.get(root, root)
        return ".".join([root, *attrs])

    def is_builtin(self, name: str, shadowed: frozenset[str] | set[str] = frozenset()) -> bool:
        """True when `name` refers to the builtin: not bound locally, at module level, or by import."""
        return name not in shadowed and name not in self.module_names


def _function_tables(tree: ast.Module, functions: Mapping[str, FunctionInfo]) -> dict[str, tuple[str, ...]]:
    """Module-level dicts of this file's functions, bound once (`ROPE_INIT_FUNCTIONS = {"default":
    _default, ...}`): looking one up runs one of them, so a call through it runs one of these."""
    tables: dict[str, tuple[str, ...]] = {}
    bound: set[str] = set()
    bound_again: set[str] = set()
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            continue
        name, value = stmt.targets[0].id, stmt.value
        if name in bound:  # bound again, to anything: not a table of known functions
            bound_again.add(name)
        bound.add(name)
        if (
            isinstance(value, ast.Dict)
            and value.values
            and None not in value.keys
            and all(isinstance(v, ast.Name) and v.id in functions for v in value.values)
        ):
            tables[name] = tuple(dict.fromkeys(v.id for v in value.values))  # type: ignore[attr-defined]
    if tables:  # a table filled in elsewhere (`TABLE[k] = f`, `TABLE.update(...)`) holds unknown functions
        for node in walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, (ast.Store, ast.Del))
                and isinstance(node.value, ast.Name)
            ):
                bound_again.add(node.value.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in _DICT_MUTATORS:
                bound_again.add(node.value.id)
    return {name: members for name, members in tables.items() if name not in bound_again}


_CHILD_FIELDS: dict[type, tuple[tuple[str, int], ...]] = {}
# How a field holds children: one node (or None), a list of nodes, a list of nodes and None
# (`{**d}` keys, keyword-only arguments without a default). Lists of names hold no node.
_ONE, _LIST, _LIST_WITH_NONE = 0, 1, 2
_LISTS_WITH_NONE = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults")})
_LISTS_OF_NAMES = frozenset({(ast.Global, "names"), (ast.Nonlocal, "names"), (ast.MatchClass, "kwd_attrs")})


def _fields(node: ast.AST) -> tuple[tuple[str, int], ...]:
    """The node type's child fields in `_fields` order, without the expression contexts (`Load`,
    `Store`: no analysis looks at them as nodes)."""
    kind = type(node)
    found = _CHILD_FIELDS.get(kind)
    if found is None:
        fields = []
        for name in node._fields:
            value: Any = getattr(node, name, None)
            if name == "ctx" or (kind, name) in _LISTS_OF_NAMES:
                continue
            if isinstance(value, list):
                fields.append((name, _LIST_WITH_NONE if (kind, name) in _LISTS_WITH_NONE else _LIST))
            else:
                fields.append((name, _ONE))
        found = _CHILD_FIELDS[kind] = tuple(fields)
    return found


_Module = TypeVar("_Module", ast.Module, "ModuleIndex")
_Fact = TypeVar("_Fact")


def once_per_module(fact: Callable[[_Module], _Fact]) -> Callable[[_Module], _Fact]:
    """`fact(module)` computed once per module (its tree or its `ModuleIndex`) and kept on that
    object, so that it lives exactly as long as the analysis that asked for it. A cache keyed by
    the object (`lru_cache`) kept the last few modules' trees and indexes alive after their
    analyses, in the language server's own process too (it analyses for hovers and code actions)."""
    attribute = f"_graphmend_{fact.__module__}.{fact.__qualname__}"

    @wraps(fact)
    def kept(module: _Module) -> _Fact:
        facts = module.__dict__
        if attribute not in facts:
            facts[attribute] = fact(module)
        return facts[attribute]

    return kept


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without the expression contexts and without its generators: the
    walks of every analysis are the bulk of its time, and this is about twice as fast."""
    found: list[ast.AST] = []
    for name, how in _fields(node):
        value: Any = getattr(node, name, None)
        if how == _ONE:
            if isinstance(value, ast.AST):
                found.append(value)
        elif how == _LIST:
            found.extend(value)
        else:
            found.extend(item for item in value if item is not None)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` (breadth first, in the same order) over `child_nodes`."""
    todo = deque([node])
    pop, append, extend = todo.popleft, todo.append, todo.extend
    while todo:
        current = pop()
        for name, how in _fields(current):
            value: Any = getattr(current, name, None)
            if how == _ONE:
                if isinstance(value, ast.AST):
                    append(value)
            elif how == _LIST:
                extend(value)
            else:
                extend(item for item in value if item is not None)
        yield current


def _parents(root: ast.AST) -> dict[int, ast.AST]:
    """Each node under `root` by id -> the node holding it, kept on `root` (trees are not changed
    after parsing): the analyses ask for the statement, loop or call around a node thousands of
    times per file, and a walk of the function for each was most of a 4,000-function file's time."""
    kept: dict[int, ast.AST] | None = root.__dict__.get("_graphmend_parents")
    if kept is None:
        kept = {}
        for node in walk(root):
            for child in child_nodes(node):
                kept[id(child)] = node
        root.__dict__["_graphmend_parents"] = kept
    return kept


def parent_of(node: ast.AST, root: ast.AST) -> ast.AST | None:
    """The node of `root`'s tree that holds `node` (None for `root` and for a node not under it)."""
    return _parents(root).get(id(node))


def ancestors(node: ast.AST, root: ast.AST) -> list[ast.AST]:
    """`node`, then each node holding it up to `root` (included), innermost first; `[]` when `node`
    is not under `root`."""
    parents = _parents(root)
    if node is not root and id(node) not in parents:
        return []
    chain = [node]
    while chain[-1] is not root:
        chain.append(parents[id(chain[-1])])
    return chain


def statement_of(node: ast.AST, root: ast.AST) -> ast.stmt | None:
    """The innermost statement under `root` (not `root` itself) that holds `node` (or is it)."""
    for holder in ancestors(node, root):
        if holder is root:
            return None
        if isinstance(holder, ast.stmt):
            return holder
    return None


def node_ids(node: ast.AST) -> frozenset[int]:
    """The ids of `node` and every node under it, kept on `node`."""
    kept: frozenset[int] | None = node.__dict__.get("_graphmend_node_ids")
    if kept is None:
        kept = frozenset(id(n) for n in walk(node))
        node.__dict__["_graphmend_node_ids"] = kept
    return kept


def attribute_chain(expr: ast.expr) -> tuple[str, list[str]] | None:
    """`a.b.c` → ("a", ["b", "c"]); None for anything but a name followed by attributes."""
    attrs: list[str] = []
    while isinstance(expr, ast.Attribute):
        attrs.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return expr.id, attrs[::-1]


def name_in(qualname: str, names: frozenset[str]) -> bool:
    """`qualname` is one of `names`, or a relative name outside any package (`...layers.Block`)
    whose dotted tail ends one of them (`transformers.layers.Block`)."""
    if qualname in names:
        return True
    tail = "." + qualname.lstrip(".")
    return qualname.startswith(".") and any(name.endswith(tail) for name in names)


def library_name_for(relative: str) -> str:
    """A relative name outside any package, read as the known library name with the same dotted
    tail (or a package above one): `...utils.is_torchdynamo_compiling` →
    `transformers.utils.is_torchdynamo_compiling`. Unchanged when no library name fits."""
    tail = "." + relative.lstrip(".")
    fits = [prefix for prefix in _LIBRARY_PREFIXES if prefix.endswith(tail)]
    return min(fits, key=lambda name: (_library_rank(name), name)) if fits else relative


def _library_rank(name: str) -> int:
    root = name.split(".", 1)[0]
    return _LIBRARY_PREFERENCE.index(root) if root in _LIBRARY_PREFERENCE else len(_LIBRARY_PREFERENCE)


def may_be_unseen_module_base(qualname: str) -> bool:
    """Whether an imported base that graphmend cannot resolve may be an nn.Module subclass: any
    base but one from torch, NumPy or the standard library, whose classes graphmend knows."""
    return qualname.startswith(".") or qualname.split(".", 1)[0] not in _KNOWN_PACKAGES


def _is_instance_method(function: FunctionInfo | None) -> bool:
    return function is not None and not any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.node.decorator_list
    )


def is_module_base_qualname(qualname: str) -> bool:
    """Whether an imported base class is an nn.Module subclass, judged by its qualified name."""
    if qualname in _MODULE_BASES:
        return True
    if qualname.startswith("torch.nn."):
        last = qualname.rsplit(".", 1)[-1]
        return last[:1].isupper() and last not in _NN_NON_MODULES
    # transformers resolved from inside its own package, or a relative import whose package is unknown.
    return qualname.lstrip(".").endswith("modeling_utils.PreTrainedModel")


def _scope_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a scope, descending into compound statements but not into nested scopes."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        children: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            children.extend(getattr(stmt, name, ()) or ())
        for handler in getattr(stmt, "handlers", ()) or ():
            children.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            children.extend(case.body)
        stack.extend(reversed(children))


def argument_names(args: ast.arguments) -> list[str]:
    """Every name a function's or a lambda's parameters bind, `*args` and `**kwargs` included."""
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None]


def _local_names(scope: ast.Module | FunctionNode, may_have_walrus: bool = True) -> frozenset[str]:
    names: set[str] = set()
    declared_global: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        names.update(argument_names(scope.args))
    for stmt in _scope_statements(scope.body):
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            declared_global.update(stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                names.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(stmt, ast.ImportFrom):
            names.update(a.asname or a.name for a in stmt.names if a.name != "*")
        for target in _binding_targets(stmt):
            names.update(n.id for n in walk(target) if isinstance(n, ast.Name))
        for handler in getattr(stmt, "handlers", ()) or ():
            if handler.name:
                names.add(handler.name)
    # Walrus targets bind in the enclosing function scope wherever they appear.
    for node in _walk_scope_expressions(scope.body) if may_have_walrus else ():
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names - declared_global)


def _rebound_names(tree: ast.Module, declared_global: frozenset[str], may_have_walrus: bool) -> frozenset[str]:
    """Module-level names something other than an import binds or deletes (`torch = None` after
    `import torch`, a `global torch` in a function): code reading them at call time may find
    something else. A binding in the `except` of a `try` that imports the name (`except
    ImportError: torch = None`) is left out: it runs only where the import failed."""
    fallbacks: dict[int, set[str]] = {}  # id of a statement in such an `except` -> the names the try imports
    for stmt in _scope_statements(tree.body):
        if isinstance(stmt, ast.Try):
            imported = {
                alias.asname or alias.name.split(".", 1)[0]
                for s in _scope_statements(stmt.body)
                if isinstance(s, (ast.Import, ast.ImportFrom))
                for alias in s.names
            }
            for handler in stmt.handlers:
                for s in _scope_statements(handler.body):
                    fallbacks[id(s)] = imported
    names = set(declared_global)
    for stmt in _scope_statements(tree.body):
        bound = {n.id for target in _binding_targets(stmt) for n in walk(target) if isinstance(n, ast.Name)}
        if isinstance(stmt, ast.Delete):
            bound.update(n.id for target in stmt.targets for n in walk(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(stmt.name)
        bound.update(handler.name for handler in getattr(stmt, "handlers", ()) or () if handler.name)
        names.update(bound - fallbacks.get(id(stmt), set()))
    if may_have_walrus:
        names.update(
            n.target.id
            for n in _walk_scope_expressions(tree.body)
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)
        )
    return frozenset(names)


def _rebound_functions(
    tree: ast.Module, functions: Mapping[str, FunctionInfo], declared_global: frozenset[str]
) -> set[str]:
    """Module-level functions whose name is bound again by something other than a wrapper of
    itself (`scale = _noisy`, a loop, a `global` in a function; not `f = torch.compile(f)`): a call
    of the name may run another function than the `def`'s body, which the analyses would judge
    (issue 67, review 10: a print in the function actually called, not named)."""
    found = {name for name in declared_global if name in functions}
    for stmt in _scope_statements(tree.body):
        wrapped = (
            {a.id for a in stmt.value.args if isinstance(a, ast.Name)}
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
            else set()
        )
        for target in _binding_targets(stmt):
            found.update(
                n.id for n in walk(target) if isinstance(n, ast.Name) and n.id in functions and n.id not in wrapped
            )
    return found


def _binding_targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return [t for t in stmt.targets if not isinstance(t, (ast.Attribute, ast.Subscript))]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target] if isinstance(stmt.target, ast.Name) else []
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


def _walk_scope_expressions(body: list[ast.stmt]) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(child_nodes(node))
