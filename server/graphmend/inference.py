"""Value kinds: is an expression a tensor, a bool tensor, a Python value, a logger — or unknown.

A forward, flow-sensitive walk over one function's statements keeps the kind of every local name
(`seq_len = torch.max(ids) + 1` makes `seq_len` a tensor, so `if seq_len > limit:` tests data).
Branches are walked on copies and joined; loop bodies twice, so loop-carried values are seen.
Every expression is offered to a visitor together with the kinds in force at that point.
Unknown stays unknown: graphmend only flags what it can show is a tensor.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Iterator, Protocol

from . import torch_api
from .kinds import TENSORISH, Env, Kind, join
from .regions import CompiledRegions, Entry
from .semantics import (
    BOUND,
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    child_nodes,
    init_bindings,
    walk,
)

_PYTHON_BUILTINS = frozenset(
    "len isinstance issubclass hasattr callable str repr type id range hash format chr ord divmod".split()
)
_CONTAINER_BUILTINS = frozenset("list tuple dict set frozenset zip enumerate sorted reversed map filter".split())
_STDLIB_LOGGER_FACTORIES = frozenset({"logging.getLogger", "logging.getLoggerClass"})
_CONTAINER_ANNOTATIONS = frozenset(
    "dict list tuple set frozenset typing.Dict typing.List typing.Tuple typing.Set typing.FrozenSet typing.Sequence "
    "typing.Mapping typing.Iterable collections.abc.Sequence collections.abc.Mapping collections.abc.Iterable".split()
)
_TENSOR_ANNOTATIONS = frozenset(
    "torch.Tensor torch.FloatTensor torch.LongTensor torch.DoubleTensor torch.HalfTensor torch.IntTensor "
    "torch.ByteTensor torch.nn.Parameter torch.nn.parameter.Parameter".split()
)
_PYTHON_ANNOTATIONS = frozenset("bool int float str complex bytes".split())


def is_logger_factory(qualname: str | None) -> bool:
    if qualname is None:
        return False
    if qualname in _STDLIB_LOGGER_FACTORIES or qualname in torch_api.LIBRARY_LOGGER_FACTORIES:
        return True
    # `from ...utils import logging` inside transformers when the package could not be located.
    return qualname.startswith(".") and qualname.lstrip(".").endswith("utils.logging.get_logger")


class ExpressionVisitor(Protocol):
    def __call__(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> None: ...


class ModuleAnalysis:
    """Shared, cached facts for all functions of one module."""

    def __init__(self, index: ModuleIndex, regions: CompiledRegions) -> None:
        self.index = index
        self.regions = regions
        self._return_kinds: dict[int, Kind] = {}
        self._in_progress: set[int] = set()
        self._class_attributes: dict[int, dict[str, Kind]] = {}
        self._init_values: dict[int, dict[str, list[tuple[FunctionInfo, ast.expr | None]]]] = {}
        self._constructors: dict[int, dict[str, frozenset[str]]] = {}
        self._final_envs: dict[int, Env] = {}
        self._numpy_parameters: dict[int, frozenset[str]] = {}
        self._numpy_callers: dict[int, list[tuple[FunctionInfo, ast.Call]]] | None = None
        # NumPy flows into helpers only in a file that imports it (at the top; most model files do not)
        self.imports_numpy = any(q == "numpy" or q.startswith("numpy.") for q in index.imports.values())
        self.module_env = self._module_env()

    def _module_env(self) -> Env:
        env: Env = {}
        probe = FunctionAnalysis(self, None)
        for stmt in self.index.tree.body:
            if isinstance(stmt, ast.Assign):
                kind = probe.kind(stmt.value)
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        env[target.id] = join(env[target.id], kind) if target.id in env else kind
        return env

    def return_kind(self, function: FunctionInfo) -> Kind:
        key = id(function.node)
        if key in self._return_kinds:
            return self._return_kinds[key]
        if key in self._in_progress:
            return Kind.UNKNOWN
        self._in_progress.add(key)
        try:
            analysis = FunctionAnalysis(self, function)
            analysis.run()
            kinds = analysis.return_kinds
            result = kinds[0] if kinds else Kind.NONE
            for kind in kinds[1:]:
                result = join(result, kind)
        finally:
            self._in_progress.discard(key)
        self._return_kinds[key] = result
        return result

    def final_env(self, function: FunctionInfo) -> Env:
        """Kinds at the end of a function, for closures of functions nested in it."""
        key = id(function.node)
        if key not in self._final_envs:
            self._final_envs[key] = {}
            analysis = FunctionAnalysis(self, function)
            analysis.run()
            self._final_envs[key] = analysis.env
        return self._final_envs[key]

    def numpy_parameters(self, function: FunctionInfo) -> frozenset[str]:
        """Parameters of a function that a caller in this file passes a NumPy value. Dynamo traces
        NumPy as tensors, so they are data in the callee too (BigBird's random block plan passes
        `plan_block_length[i]` on to `_get_single_block_row_attention`, measured: its `np.arange`,
        `range` and `if` on them break). Only callers that call NumPy themselves are walked."""
        key = id(function.node)
        if key in self._numpy_parameters:
            return self._numpy_parameters[key]
        self._numpy_parameters[key] = frozenset()  # a recursive call sees none while this is computed
        args = function.node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        decorators = {d.id for d in function.node.decorator_list if isinstance(d, ast.Name)}
        if function.owner is not None and "staticmethod" not in decorators:
            positional = positional[1:]  # `self` / `cls` is bound
        names = set(positional) | {a.arg for a in args.kwonlyargs}
        found: set[str] = set()
        for caller, call in self._callers_with_numpy().get(key, []):
            probe = FunctionAnalysis(self, caller)
            probe.env = dict(self.final_env(caller))
            for position, argument in enumerate(call.args):
                if isinstance(argument, ast.Starred):
                    break
                if position < len(positional) and probe.kind(argument) is Kind.NUMPY:
                    found.add(positional[position])
            found |= {k.arg for k in call.keywords if k.arg in names and probe.kind(k.value) is Kind.NUMPY}
        self._numpy_parameters[key] = frozenset(found)
        return self._numpy_parameters[key]

    def _callers_with_numpy(self) -> dict[int, list[tuple[FunctionInfo, ast.Call]]]:
        """callee → (caller, call) for the same-file calls made by functions that call NumPy."""
        if self._numpy_callers is None:
            self._numpy_callers = {}
            probe = FunctionAnalysis(self, None)
            for caller in self.index.all_functions:
                calls = list(self.regions.same_file_calls(caller))
                if not calls or not any((probe.qualified_name(c.func) or "").startswith("numpy.")
                                        for c in self.regions.calls_in(caller)):  # its own body's calls
                    continue
                for call, callee in calls:
                    self._numpy_callers.setdefault(id(callee.node), []).append((caller, call))
        return self._numpy_callers

    def init_values(self, cls: ClassInfo) -> dict[str, list[tuple[FunctionInfo, ast.expr | None]]]:
        """What `__init__` (of the class or a same-file base) binds to each `self.<name>`: the
        `__init__` and the value of every `self.name = value` (None for a target without a single
        value: tuple unpacking, augmented assignment, `register_buffer`/`register_parameter`);
        the names alone (no values) for a base in another file, from the project's summaries.
        The attributes that exist before any other method runs, and what they are made from."""
        key = id(cls.node)
        if key not in self._init_values:
            found: dict[str, list[tuple[FunctionInfo, ast.expr | None]]] = {}
            inherited = dict(self.regions.context.base_attributes)
            for klass in cls.mro():
                init = klass.methods.get("__init__")
                if init is not None:
                    for name, value in init_bindings(init):
                        values = found.setdefault(name, [])
                        if value is not BOUND:
                            values.append((init, value))  # type: ignore[arg-type]
                for base in klass.base_names:  # a base in another file: what its `__init__` chain binds
                    for name in inherited.get(base or "", ()):
                        found.setdefault(name, [])
            self._init_values[key] = found
        return self._init_values[key]

    def constructors(self, cls: ClassInfo) -> dict[str, frozenset[str]]:
        """`self.<name> = Ctor(...)` in `__init__` → {name: {qualified Ctor}} (a same-file class by
        its own name; "?" for any value that is not such a call): what calling `self.<name>` runs."""
        key = id(cls.node)
        if key not in self._constructors:
            probes: dict[int, FunctionAnalysis] = {}
            table: dict[str, frozenset[str]] = {}
            for name, values in self.init_values(cls).items():
                ctors = set()
                for init, value in values:
                    probe = probes.setdefault(id(init.node), FunctionAnalysis(self, init, with_parameters=False))
                    ctors.add(_constructor(value, probe, self.index) if value is not None else "?")
                table[name] = frozenset(ctors)
            self._constructors[key] = table
        return self._constructors[key]

    def class_attributes(self, cls: ClassInfo) -> dict[str, Kind]:
        """Kinds of `self.<name>` from every `self.name = ...` and `register_buffer` in the class."""
        key = id(cls.node)
        if key in self._class_attributes:
            return self._class_attributes[key]
        kinds: dict[str, Kind] = {}
        self._class_attributes[key] = kinds  # cycles see an empty table, i.e. unknown
        for klass in reversed(list(cls.mro())):
            for method in klass.methods.values():
                probe = FunctionAnalysis(self, method, with_parameters=False)
                for node in _assignments_and_calls(method.node.body):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if isinstance(target, ast.Attribute) and probe.is_self(target.value):
                                kind = probe.kind(node.value)
                                kinds[target.attr] = join(kinds[target.attr], kind) if target.attr in kinds else kind
                    elif (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "register_buffer"
                        and probe.is_self(node.func.value)
                        and node.args
                        and isinstance(node.args[0], ast.Constant)
                        and isinstance(node.args[0].value, str)
                    ):
                        kinds[node.args[0].value] = Kind.TENSOR
        kinds["training"] = Kind.PYTHON
        return kinds


def _assignments_and_calls(body: list[ast.stmt]) -> Iterator[ast.Assign | ast.Call]:
    """Every assignment statement below `body` (nested blocks and functions included), and every
    call that is a statement of its own: what `self.x = ...` and `self.register_buffer(...)`
    look like, found without walking every expression."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Assign):
            yield stmt
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            yield stmt.value
        for name in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(stmt, name, ()) or ()))
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(reversed(case.body))


class FunctionAnalysis:
    """Kinds of the names of one function, walked statement by statement."""

    def __init__(
        self,
        module: ModuleAnalysis,
        function: FunctionInfo | None,
        visitor: ExpressionVisitor | None = None,
        with_parameters: bool = True,
        entry: Entry | None = None,
    ) -> None:
        self.module = module
        self.entry = entry  # the compiled entry this function is analysed as part of
        self.index = module.index
        self.function = function
        self.visitor = visitor
        self.return_kinds: list[Kind] = []
        self.local_names: frozenset[str] = function.local_names if function else frozenset()
        self.self_name = function.self_name if function else None
        self._kinds: dict[int, Kind] = {}  # id(expression) → kind, for the names' kinds in force now
        # Parameters that are tensors only because some compiled caller in another file passes a
        # tensor (others may pass numbers) → their annotation ("" for none): a rewrite of a test
        # of one must keep working for a Python value too.
        self.caller_typed: dict[str, str] = {}
        self._env: Env = self._parameter_kinds() if (function and with_parameters) else {}
        self.compile_constants: dict[str, bool] = {}  # names bound at the top to a value fixed under compile
        self._depth = 0  # how many branches deep the walk is
        self.guards: list[tuple[ast.expr, bool]] = []  # enclosing Python-decided `if` tests, and the side taken
        if function is not None and not with_parameters and self.self_name:
            self.env[self.self_name] = Kind.SELF

    @property
    def env(self) -> Env:
        """The kinds of the names in force at the point the walk has reached."""
        return self._env

    @env.setter
    def env(self, kinds: Env) -> None:
        self._env = kinds
        self._kinds.clear()

    # ----------------------------------------------------------------- parameters
    def _parameter_kinds(self) -> Env:
        assert self.function is not None
        node = self.function.node
        args = node.args
        env: Env = {}
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        evidence = self.tensor_evidence if pairs else {}
        given = self.module.regions.context.parameters_given_tensors(self.function.qualname)
        numpy_given = self.module.numpy_parameters(self.function) if self.module.imports_numpy else frozenset()
        for arg, default in pairs:
            kind = self._parameter_kind(arg, default, evidence)
            if kind is Kind.UNKNOWN and arg.arg in numpy_given:
                kind = Kind.NUMPY
            if arg.arg in given and not kind.is_tensor:
                optional = isinstance(default, ast.Constant) and default.value is None
                kind = Kind.OPTIONAL_TENSOR if optional else Kind.TENSOR
                self.caller_typed[arg.arg] = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            env[arg.arg] = kind
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                env[arg.arg] = Kind.CONTAINER
        if self.self_name and self.function.owner is not None:
            env[self.self_name] = Kind.SELF
        return env

    def _parameter_kind(self, arg: ast.arg, default: ast.expr | None, evidence: dict[str, Kind]) -> Kind:
        if arg.annotation is not None:
            kind = self.annotation_kind(arg.annotation)
            if kind is not Kind.UNKNOWN:
                if isinstance(default, ast.Constant) and default.value is None and kind.is_tensor:
                    return join(kind, Kind.NONE)
                return kind
        if isinstance(default, ast.Constant):
            if default.value is None:
                return Kind.OPTIONAL_TENSOR if arg.arg in evidence else Kind.NONE
            return Kind.PYTHON
        return evidence.get(arg.arg, Kind.UNKNOWN)

    def annotation_kind(self, annotation: ast.expr) -> Kind:
        if isinstance(annotation, ast.Name) and annotation.id in _PYTHON_ANNOTATIONS:
            return Kind.PYTHON if self.index.is_builtin(annotation.id) else Kind.UNKNOWN
        if isinstance(annotation, ast.Name) and annotation.id in _CONTAINER_ANNOTATIONS and self.index.is_builtin(annotation.id):
            return Kind.CONTAINER
        if isinstance(annotation, ast.Constant) and annotation.value is None:
            return Kind.NONE
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return join(self.annotation_kind(annotation.left), self.annotation_kind(annotation.right))
        if isinstance(annotation, ast.Subscript):
            origin = self.qualified_name(annotation.value)
            inner = annotation.slice
            if origin in ("typing.Optional", "typing_extensions.Optional"):
                return join(self.annotation_kind(inner), Kind.NONE)
            if origin in ("typing.Union", "typing_extensions.Union") and isinstance(inner, ast.Tuple):
                kinds = [self.annotation_kind(e) for e in inner.elts]
                result = kinds[0]
                for kind in kinds[1:]:
                    result = join(result, kind)
                return result
            if origin in _CONTAINER_ANNOTATIONS or (
                isinstance(annotation.value, ast.Name) and annotation.value.id in _CONTAINER_ANNOTATIONS
                and self.index.is_builtin(annotation.value.id)
            ):
                return Kind.CONTAINER
            return Kind.UNKNOWN
        qualname = self.qualified_name(annotation)
        if qualname in _CONTAINER_ANNOTATIONS:
            return Kind.CONTAINER
        if qualname in _TENSOR_ANNOTATIONS:
            return Kind.TENSOR
        if qualname == "torch.BoolTensor":
            return Kind.BOOL_TENSOR
        return Kind.UNKNOWN

    @cached_property
    def tensor_evidence(self) -> dict[str, Kind]:
        """Names used as tensors: `x.sum()`, `x.shape`, `torch.relu(x)` → TENSOR.

        Use through a subscript (`x[0].item()`) is weaker evidence, since `x` may be a tuple of
        tensors: such names get OPTIONAL_TENSOR, whose own truthiness is never flagged.
        `h = x * 2` then `h.sum()` carries the evidence back to `x` (only a tensor x makes h one).
        """
        assert self.function is not None
        found: dict[str, Kind] = {}

        def note(name: str, kind: Kind) -> bool:
            if found.get(name) is Kind.TENSOR or found.get(name) is kind:
                return False
            found[name] = kind
            return True

        derived: list[tuple[str, str, bool]] = []  # (local, the name it comes from, through a subscript)
        for node in walk(self.function.node):
            if isinstance(node, ast.Attribute) and node.attr in torch_api.TENSOR_EVIDENCE:
                base = _subscript_base(node.value)
                if isinstance(base, ast.Name):
                    note(base.id, Kind.TENSOR if base is node.value else Kind.OPTIONAL_TENSOR)
            elif isinstance(node, ast.Call) and node.args:
                qualname = self.qualified_name(node.func)
                if (
                    qualname is not None
                    and self.torch_call_kind(qualname) in TENSORISH
                    and qualname.rsplit(".", 1)[-1] not in torch_api.FACTORY_FUNCTIONS
                ):
                    # torch.relu(x), torch.any(x > 0): only a tensor x makes the call valid.
                    source = _sole_variable(node.args[0])
                    if source is not None:
                        note(source[0], Kind.OPTIONAL_TENSOR if source[1] else Kind.TENSOR)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                source = _sole_variable(node.value)
                if source is not None:
                    derived.append((node.targets[0].id, *source))
        changed = True
        while changed:
            changed = False
            for local, source, through_subscript in derived:
                if local in found:
                    strength = Kind.OPTIONAL_TENSOR if through_subscript else found[local]
                    changed |= note(source, strength)
        return found

    @property
    def runs_inlined(self) -> bool:
        """Dynamo inlines this function into a compiled frame rather than compiling it as one: it is
        reached through a call, or compiled code of another file calls it."""
        entry = self.entry
        return entry is not None and (entry.called or (self.function is not None and self.function is not entry.function))

    @property
    def captures(self) -> frozenset[str]:
        """Dynamo capture settings the compiled entry runs under (`capture_scalar_outputs`...)."""
        return self.entry.captures if self.entry is not None else frozenset()

    # ----------------------------------------------------------------- queries
    def used_as_tensor(self, expr: ast.expr) -> bool:
        """A tensor by its kind, or a name this function uses as a tensor (`x.abs().max()`)."""
        if self.kind(expr).is_tensor:
            return True
        return isinstance(expr, ast.Name) and self.has_tensor_evidence(expr.id)

    def has_tensor_evidence(self, name: str) -> bool:
        """The function uses `name` itself as a tensor (`name.sum()`, `torch.relu(name)`)."""
        return self.function is not None and self.tensor_evidence.get(name) is Kind.TENSOR

    def is_self(self, expr: ast.expr) -> bool:
        return self.function is not None and self.function.is_self(expr)

    def qualified_name(self, expr: ast.expr) -> str | None:
        return self.index.qualified_name(expr, self.shadowed_names, self.local_imports)

    @cached_property
    def shadowed_names(self) -> frozenset[str]:
        """Names bound in this function or an enclosing one: they hide module-level bindings."""
        names = self.local_names
        parent = self.function.parent if self.function else None
        while parent is not None:
            names = names | parent.local_names
            parent = parent.parent
        return names

    @cached_property
    def local_imports(self) -> dict[str, str]:
        chain: list[FunctionInfo] = []
        function = self.function
        while function is not None:
            chain.append(function)
            function = function.parent
        imports: dict[str, str] = {}
        for function in reversed(chain):
            imports.update(function.local_imports)
        return imports

    def is_builtin(self, name: str) -> bool:
        return self.index.is_builtin(name, self.shadowed_names)

    def name_kind(self, name: str) -> Kind:
        if name in self.env:
            return self.env[name]
        if name in self.local_names:
            return Kind.UNKNOWN  # bound later on this path, or by something we do not track
        parent = self.function.parent if self.function else None
        while parent is not None:
            if name in parent.local_names:
                return self.module.final_env(parent).get(name, Kind.UNKNOWN)
            parent = parent.parent
        return self.module.module_env.get(name, Kind.UNKNOWN) if self.function else Kind.UNKNOWN

    def kind(self, expr: ast.expr) -> Kind:
        """The kind of `expr` with the names' kinds in force now (remembered until a name's kind
        changes: the rules ask for the same expressions again and again)."""
        known = self._kinds.get(id(expr))
        if known is None:
            known = self._kinds[id(expr)] = self._kind(expr)
        return known

    def _kind(self, expr: ast.expr) -> Kind:
        if isinstance(expr, ast.Constant):
            return Kind.NONE if expr.value is None else Kind.PYTHON
        if isinstance(expr, ast.Name):
            kind = self.name_kind(expr.id)
            if kind is Kind.UNKNOWN and expr.id not in self.shadowed_names:
                qualname = self.qualified_name(expr)
                return self._module_value_kind(qualname) if qualname is not None else kind
            return kind
        if isinstance(expr, ast.Attribute):
            return self._attribute_kind(expr)
        if isinstance(expr, ast.Call):
            return self._call_kind(expr)
        if isinstance(expr, ast.Compare):
            return self._compare_kind(expr)
        if isinstance(expr, ast.BinOp):
            return self._binop_kind(expr)
        if isinstance(expr, ast.UnaryOp):
            operand = self.kind(expr.operand)
            if isinstance(expr.op, ast.Not):
                return Kind.PYTHON
            if isinstance(expr.op, ast.Invert) and operand.present is Kind.BOOL_TENSOR:
                return Kind.BOOL_TENSOR
            return Kind.TENSOR if operand.is_tensor else operand if operand is Kind.PYTHON else Kind.UNKNOWN
        if isinstance(expr, ast.BoolOp):
            kinds = [self.kind(v) for v in expr.values]
            return kinds[-1] if all(k is kinds[-1] for k in kinds) else Kind.UNKNOWN
        if isinstance(expr, ast.IfExp):
            return join(self.kind(expr.body), self.kind(expr.orelse))
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Call) and _as_tuple(expr.value) and self._nonzero(expr.value):
                return Kind.TENSOR  # one of the index tensors of `nonzero(..., as_tuple=True)`
            value = self.kind(expr.value)
            if value.present is Kind.BOOL_TENSOR:
                return Kind.BOOL_TENSOR  # indexing keeps the dtype: `router_mask[:, idx]` is a mask too
            if value.is_tensor:
                return Kind.TENSOR
            return value if value in (Kind.PYTHON, Kind.NUMPY) else Kind.UNKNOWN
        if isinstance(expr, ast.NamedExpr):
            return self.kind(expr.value)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)):
            return Kind.CONTAINER
        if isinstance(expr, ast.JoinedStr):
            return Kind.PYTHON
        return Kind.UNKNOWN

    def _attribute_kind(self, expr: ast.Attribute) -> Kind:
        qualname = self.qualified_name(expr)
        if qualname is not None:
            return self._module_value_kind(qualname)
        value = self.kind(expr.value)
        if value is Kind.SELF:
            method = self.function.method if self.function else None
            if method is None or method.owner is None:
                return Kind.UNKNOWN
            owner = method.owner
            return self.module.class_attributes(owner).get(expr.attr, Kind.UNKNOWN)
        if expr.attr in torch_api.TENSOR_PYTHON_ATTRIBUTES or value is Kind.PYTHON:
            return Kind.PYTHON  # `t.shape`, or an attribute of a Python value (`torch.finfo(t.dtype).max`)
        if value.is_tensor and expr.attr in torch_api.TENSOR_TENSOR_ATTRIBUTES:
            return Kind.TENSOR
        return Kind.UNKNOWN

    @staticmethod
    def _module_value_kind(qualname: str) -> Kind:
        """An imported value: `torch.float16` is a Python object; anything else is not known."""
        if qualname.startswith("torch.") and qualname[len("torch.") :] in torch_api.PYTHON_VALUE_ATTRIBUTES:
            return Kind.PYTHON
        return Kind.UNKNOWN

    def _compare_kind(self, expr: ast.Compare) -> Kind:
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in expr.ops) and len(expr.ops) == 1 \
                and self._is_sequence(expr.comparators[0]):
            # `t in [1, 2]` compares the value with each item: data (measured on torch 2.13: a
            # branch on it breaks, gb0170 for a tensor, gb0033 for a NumPy number). Sets and dicts
            # hash instead (a tensor's hash is its identity), so they are left out.
            left = self.kind(expr.left)
            return Kind.BOOL_TENSOR if left.is_tensor else Kind.NUMPY if left is Kind.NUMPY else Kind.PYTHON
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
            return Kind.PYTHON
        if any(_is_non_numeric_literal(e) for e in [expr.left, *expr.comparators]):
            # A tensor compared with a string or None is never equal: Python's bool, no data read.
            return Kind.PYTHON
        kinds = [self.kind(expr.left), *(self.kind(c) for c in expr.comparators)]
        if any(k.is_tensor for k in kinds):
            return Kind.BOOL_TENSOR
        if Kind.NUMPY in kinds:
            return Kind.NUMPY  # a NumPy bool (array): traced as a tensor under compile
        return Kind.PYTHON if all(k in (Kind.PYTHON, Kind.NONE) for k in kinds) else Kind.UNKNOWN

    def _is_sequence(self, expr: ast.expr) -> bool:
        """A list or tuple: a literal, `list(...)`/`tuple(...)`, or a local name only ever bound to one."""
        if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple"):
            return self.is_builtin(expr.func.id)
        if isinstance(expr, ast.Name) and self.function is not None and expr.id not in self.function.parameter_names:
            values = self.module.regions.assigned_values(self.function).get(expr.id, [])
            return bool(values) and all(not isinstance(v, ast.Name) and self._is_sequence(v) for v in values)
        return False

    def _binop_kind(self, expr: ast.BinOp) -> Kind:
        left, right = self.kind(expr.left), self.kind(expr.right)
        if isinstance(expr.op, ast.Mod) and (left is Kind.PYTHON or isinstance(expr.left, ast.JoinedStr)):
            return Kind.PYTHON
        if left.is_tensor or right.is_tensor:
            if isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and Kind.TENSOR not in (left, right):
                return Kind.BOOL_TENSOR
            return Kind.TENSOR
        if Kind.NUMPY in (left, right):
            return Kind.NUMPY
        if isinstance(expr.op, ast.MatMult):
            return Kind.TENSOR
        return Kind.PYTHON if left is Kind.PYTHON and right is Kind.PYTHON else Kind.UNKNOWN

    def torch_call_kind(self, qualname: str) -> Kind:
        if not qualname.startswith("torch."):
            return Kind.UNKNOWN
        if qualname.startswith(torch_api.TENSOR_NAMESPACES):
            return Kind.TENSOR
        if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return Kind.TENSOR
        if qualname.startswith("torch.nn.") and qualname.rsplit(".", 1)[-1] in torch_api.SINGLE_TENSOR_MODULES:
            return Kind.TENSOR_MODULE
        name = qualname[len("torch.") :]
        if name in torch_api.BOOL_TENSOR_FUNCTIONS:
            return Kind.BOOL_TENSOR
        if name in torch_api.TENSOR_FUNCTIONS:
            return Kind.TENSOR
        if name in torch_api.PYTHON_VALUE_FUNCTIONS:
            return Kind.PYTHON
        return Kind.UNKNOWN

    def _call_kind(self, call: ast.Call) -> Kind:
        if _as_tuple(call):
            return Kind.CONTAINER  # `torch.nonzero(m, as_tuple=True)`: a tuple of index tensors
        func = call.func
        qualname = self.qualified_name(func)
        if qualname is not None:
            if is_logger_factory(qualname):
                return Kind.LOGGER
            if qualname in torch_api.IS_COMPILING_FUNCTIONS or qualname in torch_api.IS_SCRIPTING_FUNCTIONS:
                return Kind.PYTHON
            root = qualname.split(".", 1)[0]
            if root == "numpy":
                # A drawn number breaks the graph where it is drawn; after the break it is Python's.
                return Kind.PYTHON if torch_api.is_numpy_scalar_draw(qualname, call) else Kind.NUMPY
            if root == "math":
                return Kind.PYTHON
            return self.torch_call_kind(qualname)
        if isinstance(func, (ast.Name, ast.Attribute)) and self.kind(func) is Kind.TENSOR_MODULE:
            return Kind.TENSOR
        if isinstance(func, ast.Name):
            if self.is_builtin(func.id):
                if func.id in _PYTHON_BUILTINS or func.id in torch_api.SCALAR_BUILTINS:
                    return Kind.PYTHON
                if func.id in _CONTAINER_BUILTINS:
                    return Kind.CONTAINER
                if func.id == "abs" and call.args:
                    return self.kind(call.args[0])
                return Kind.UNKNOWN
        elif isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            if receiver.is_tensor:
                if receiver.present is Kind.BOOL_TENSOR and self._keeps_dtype(call):
                    return Kind.BOOL_TENSOR  # `mask.to(x.device)`, `mask.unsqueeze(-1)`: still a mask
                return self._tensor_method_kind(func.attr)
            if receiver is Kind.LOGGER:
                return Kind.PYTHON
            if receiver is Kind.NUMPY:
                return Kind.PYTHON if func.attr in torch_api.SCALAR_METHODS else Kind.NUMPY  # `.item()` breaks, then is Python
            if receiver is Kind.UNKNOWN and func.attr in torch_api.REDUCTION_METHODS and not self._is_same_file_call(call):
                return Kind.BOOL_TENSOR if func.attr in torch_api.TENSOR_BOOL_METHODS else Kind.TENSOR
            if receiver is Kind.UNKNOWN and func.attr in _TENSOR_ONLY_CONVERSIONS and not call.args and not call.keywords:
                return _TENSOR_ONLY_CONVERSIONS[func.attr]  # `router_probs.bool()`: nothing but a tensor has it
        if self.function is not None:
            regions = self.module.regions
            callee = regions.resolve_call(call, self.function) or regions.module_call_target(call, self.function)
            if callee is not None:  # a same-file function, or `self.block(x)` running Block.forward
                return self.module.return_kind(callee)
        return Kind.UNKNOWN

    def _keeps_dtype(self, call: ast.Call) -> bool:
        """A tensor method call whose result has its receiver's dtype: a dtype-keeping method with no
        argument that could be a dtype (`.to(x.device)`, `.to("cuda")` keep it; `.to(x.dtype)`,
        `.to(other)`, `.to(device)` with an unknown `device` may not)."""
        assert isinstance(call.func, ast.Attribute)
        if call.func.attr not in torch_api.DTYPE_KEEPING_METHODS:
            return False
        if call.func.attr != "to" and call.func.attr != "view":
            return True
        if any(k.arg == "dtype" for k in call.keywords):
            return False
        return all(self._names_no_dtype(arg, call.func.attr) for arg in call.args)

    def _names_no_dtype(self, arg: ast.expr, method: str) -> bool:
        if method == "view":  # sizes: ints and shapes
            return self.kind(arg) is Kind.PYTHON and not isinstance(arg, ast.Attribute) and self.qualified_name(arg) is None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return True  # a device name: `.to("cuda")`
        if isinstance(arg, ast.Attribute) and arg.attr == "device":
            return True
        return isinstance(arg, ast.Call) and self.qualified_name(arg.func) == "torch.device"

    def _nonzero(self, call: ast.Call) -> bool:
        """`torch.nonzero(t, ...)` or `t.nonzero(...)` on a tensor."""
        func = call.func
        if self.qualified_name(func) == "torch.nonzero":
            return True
        return isinstance(func, ast.Attribute) and func.attr == "nonzero" and self.kind(func.value).is_tensor

    def _is_same_file_call(self, call: ast.Call) -> bool:
        return self.function is not None and self.module.regions.resolve_call(call, self.function) is not None

    @staticmethod
    def _tensor_method_kind(method: str) -> Kind:
        if method in torch_api.TENSOR_PYTHON_METHODS or method in torch_api.SCALAR_METHODS or method.startswith("is_"):
            return Kind.PYTHON
        if method in torch_api.TENSOR_FOREIGN_METHODS or method not in torch_api.TENSOR_METHODS:
            return Kind.UNKNOWN
        if method in torch_api.TENSOR_BOOL_METHODS:
            return Kind.BOOL_TENSOR
        return Kind.TENSOR

    def is_data_dependent(self, test: ast.expr) -> bool:
        """Whether Python must read a tensor's value to decide this condition's truth."""
        if isinstance(test, ast.BoolOp):
            return any(self.is_data_dependent(value) for value in self._evaluated_under_compile(test))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.is_data_dependent(test.operand)
        # NumPy in compiled code is traced as tensors (torch._numpy): a test of its values breaks
        # the same way (measured: `if idxs.max() > n - 1:` on a NumPy array, gb0170).
        return self.kind(test) in (*TENSORISH, Kind.NUMPY, Kind.TENSOR_ON_SOME_PATHS)

    def ends_in_error(self, body: list[ast.stmt]) -> bool:
        """A block that ends in `raise` or `torch._assert(False, ...)`: it runs only on the way to an error."""
        last = body[-1] if body else None
        if isinstance(last, ast.Raise):
            return True
        return (
            isinstance(last, ast.Expr)
            and isinstance(last.value, ast.Call)
            and self.qualified_name(last.value.func) == "torch._assert"
            and bool(last.value.args)
            and isinstance(last.value.args[0], ast.Constant)
            and last.value.args[0].value is False
        )

    def constant_under_compile(self, test: ast.expr) -> bool | None:
        """The truth of `test` while Dynamo traces, when it is fixed: `torch.compiler.is_compiling()`
        is True, `not ...` of it False, `a or <True>` True and `a and <False>` False whatever `a` is,
        and a name bound to such a value at the top of the function keeps it."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.constant_under_compile(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.constant_under_compile(v) for v in test.values]
            decisive = isinstance(test.op, ast.Or)  # True decides an `or`, False an `and`
            if decisive in values:
                return decisive
            return (not decisive) if all(v is (not decisive) for v in values) else None
        if isinstance(test, ast.Name):
            return self.compile_constants.get(test.id)
        if isinstance(test, ast.Call):
            qualname = self.qualified_name(test.func)
            if qualname in torch_api.IS_COMPILING_FUNCTIONS:
                return True
            if qualname in torch_api.IS_SCRIPTING_FUNCTIONS:
                return False
        return None

    # ----------------------------------------------------------------- the walk
    def run(self) -> None:
        if self.function is not None:
            self._block(self.function.node.body)

    def _visit(self, expr: ast.AST | None, in_condition: bool = False) -> None:
        if expr is None or self.visitor is None:
            return
        stack: list[tuple[ast.AST, bool]] = [(expr, in_condition)]
        while stack:
            node, condition = stack.pop()
            if isinstance(node, ast.Lambda):
                continue
            self.visitor(node, self, condition)
            if isinstance(node, ast.IfExp):
                constant = self.constant_under_compile(node.test)
                if constant is not None:  # `a if is_torchdynamo_compiling() else b`: one side runs
                    stack.append((node.body if constant else node.orelse, condition))
                    continue
                when_true, when_false = self._narrowing(node.test)
                if when_true or when_false:  # `x.sum() if x is not None else 0`: each side with what the test says
                    self._visit(node.test, True)
                    for side, narrowed in ((node.body, when_true), (node.orelse, when_false)):
                        saved = self.env
                        self.env = {**saved, **narrowed}
                        try:
                            self._visit(side, condition)
                        finally:
                            self.env = saved
                    continue
                stack.append((node.orelse, condition))
                stack.append((node.body, condition))
                stack.append((node.test, True))
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                self._visit_comprehension(node, condition)
            elif isinstance(node, ast.BoolOp):
                stack.extend((value, condition) for value in reversed(self._evaluated_under_compile(node)))
            else:
                stack.extend((child, condition) for child in reversed(list(child_nodes(node))))

    def _evaluated_under_compile(self, node: ast.BoolOp) -> list[ast.expr]:
        """The operands Python evaluates while Dynamo traces: none after one that decides the
        `and`/`or` under compile (`not is_torchdynamo_compiling() and x[m].numel() > 0`)."""
        decisive = isinstance(node.op, ast.Or)
        for index, value in enumerate(node.values):
            if self.constant_under_compile(value) is decisive:
                return node.values[: index + 1]
        return node.values

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, condition: bool
    ) -> None:
        saved = dict(self.env)
        for generator in node.generators:
            self._visit(generator.iter, condition)
            self._bind_iteration(generator.target, generator.iter)
            for test in generator.ifs:
                self._visit(test, True)
        if isinstance(node, ast.DictComp):
            self._visit(node.key, condition)
            self._visit(node.value, condition)
        else:
            self._visit(node.elt, condition)
        self.env = saved
        self._kinds.clear()

    def _iteration_kind(self, iterable: ast.expr) -> Kind:
        return Kind.TENSOR if self.kind(iterable).is_tensor else Kind.UNKNOWN

    def _bind_iteration(self, target: ast.expr, iterable: ast.expr) -> None:
        """Bind a loop target to what iterating `iterable` gives, through `enumerate` (an index,
        then the items) and `zip` (one item of each): `for i, (row, n) in enumerate(zip(x, lengths))`
        makes `row` and `n` rows of tensors."""
        call = iterable if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if call is not None and isinstance(target, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in [*target.elts, *call.args]
        ) and self.is_builtin(call.func.id):  # type: ignore[attr-defined]
            if call.func.id == "enumerate" and len(call.args) == 1 and len(target.elts) == 2:  # type: ignore[attr-defined]
                pairs = [(target.elts[0], None), (target.elts[1], call.args[0])]
            elif call.func.id == "zip" and call.args and len(call.args) == len(target.elts):  # type: ignore[attr-defined]
                pairs = list(zip(target.elts, call.args))
        if not pairs:
            self._bind(target, self._iteration_kind(iterable))
            return
        for element, source in pairs:
            if source is None:
                self._bind(element, Kind.PYTHON)
            else:
                self._bind_iteration(element, source)

    def _bind(self, target: ast.expr, kind: Kind, value: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = kind
            self._kinds.clear()
            self.compile_constants.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for element, element_value in zip(target.elts, value.elts):
                    self._bind(element, self.kind(element_value), element_value)
                return
            element_kind = Kind.TENSOR if kind.is_tensor else Kind.UNKNOWN
            for element in target.elts:
                self._bind(element.value if isinstance(element, ast.Starred) else element,
                           Kind.UNKNOWN if isinstance(element, ast.Starred) else element_kind)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, Kind.UNKNOWN)

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._statement(stmt)
            if isinstance(stmt, ast.If) and self._leaves_under_compile(stmt):
                break  # what follows never runs while Dynamo traces

    def _leaves_under_compile(self, stmt: ast.If) -> bool:
        """`if is_torchdynamo_compiling(): return ...`: the branch compiled code takes returns or raises."""
        constant = self.constant_under_compile(stmt.test)
        taken = stmt.body if constant is True else stmt.orelse if constant is False else None
        return bool(taken) and isinstance(taken[-1], (ast.Return, ast.Raise))  # type: ignore[index]

    def _narrowing(self, test: ast.expr) -> tuple[Env, Env]:
        """What `x is None` / `x is not None` (alone or joined by `and`) say about `x` on each side."""
        when_true: Env = {}
        when_false: Env = {}
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for part in parts:
            tested = self._tensor_instance_test(part)
            if tested is not None:  # `isinstance(x, torch.Tensor)`
                when_true[tested] = Kind.TENSOR
                if len(parts) == 1:
                    when_false[tested] = Kind.UNKNOWN  # not a tensor: whatever it is, its tests are Python's
                continue
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.left, ast.Name)):
                continue
            right = part.comparators[0]
            if not (isinstance(right, ast.Constant) and right.value is None and isinstance(part.ops[0], (ast.Is, ast.IsNot))):
                continue
            name = part.left.id
            known = self.name_kind(name)
            present = known.present
            is_none = isinstance(part.ops[0], ast.Is)
            when_true[name] = Kind.NONE if is_none else present
            if len(parts) == 1:  # `not (a and b)` says nothing about each part alone
                when_false[name] = present if is_none else Kind.NONE
        return when_true, when_false

    def _tensor_instance_test(self, test: ast.expr) -> str | None:
        """The name `isinstance(name, torch.Tensor)` tests, if `test` is that call."""
        if (
            isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and self.is_builtin("isinstance") and len(test.args) == 2 and isinstance(test.args[0], ast.Name)
            and self.qualified_name(test.args[1]) == "torch.Tensor"
        ):
            return test.args[0].id
        return None

    def _branch(self, body: list[ast.stmt], narrowed: Env | None = None, guard: tuple[ast.expr, bool] | None = None) -> Env:
        saved = self.env
        self.env = {**saved, **(narrowed or {})}
        self._kinds.clear()
        self._depth += 1
        if guard is not None:
            self.guards.append(guard)
        try:
            self._block(body)
        finally:
            self._depth -= 1
            if guard is not None:
                self.guards.pop()
        result = self.env
        self.env = saved
        self._kinds.clear()
        return result

    def _merge(self, *envs: Env) -> None:
        merged: Env = {}
        names = set().union(*envs)
        for name in names:
            kinds = [env.get(name) for env in envs]
            if any(k is None for k in kinds):
                present = [k for k in kinds if k is not None]
                merged[name] = join(present[0], Kind.UNKNOWN) if len(set(present)) > 1 else present[0]
                continue
            result = kinds[0]
            for kind in kinds[1:]:
                result = join(result, kind)  # type: ignore[arg-type]
            merged[name] = result  # type: ignore[assignment]
        self.env = merged
        self._kinds.clear()

    def _statement(self, stmt: ast.stmt) -> None:
        visit = self._visit
        if self.visitor is not None:
            self.visitor(stmt, self, False)
        if isinstance(stmt, ast.Assign):
            visit(stmt.value)
            for target in stmt.targets:
                if not isinstance(target, ast.Name):
                    visit(target)
            kind = self.kind(stmt.value)
            for target in stmt.targets:
                self._bind(target, kind, stmt.value)
            constant = self.constant_under_compile(stmt.value)
            if constant is not None and self._depth == 0:
                self.compile_constants.update((t.id, constant) for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign):
            visit(stmt.value)
            if stmt.value is not None:
                self._bind(stmt.target, self.kind(stmt.value), stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            visit(stmt.value)
            if isinstance(stmt.target, ast.Name):
                combined = ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value)
                self.env[stmt.target.id] = self._binop_kind(combined)
                self._kinds.clear()
            else:
                visit(stmt.target)
        elif isinstance(stmt, ast.If):
            visit(stmt.test, True)
            constant = self.constant_under_compile(stmt.test)
            if constant is True:
                self._block(stmt.body)
            elif constant is False:
                self._block(stmt.orelse)
            else:
                when_true, when_false = self._narrowing(stmt.test)
                visitor = self.visitor
                if self.ends_in_error(stmt.body) and not stmt.orelse:
                    self.visitor = None  # the way to an exception: what breaks there does not matter
                static = not self.is_data_dependent(stmt.test)  # a configuration: dtype, training, None...
                try:
                    body = self._branch(stmt.body, when_true, (stmt.test, True) if static else None)
                finally:
                    self.visitor = visitor
                self._merge(body, self._branch(stmt.orelse, when_false, (stmt.test, False) if static else None))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            visit(stmt.iter)
            before = dict(self.env)
            self._depth += 1  # a loop body may run no time at all
            for _ in range(2):
                self._bind_iteration(stmt.target, stmt.iter)
                self._block(stmt.body)
                self._merge(before, self.env)
            self._depth -= 1
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.While):
            before = dict(self.env)
            self._depth += 1
            for _ in range(2):
                visit(stmt.test, True)
                self._block(stmt.body)
                self._merge(before, self.env)
            self._depth -= 1
            self._block(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                visit(item.context_expr)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, Kind.UNKNOWN)
            self._block(stmt.body)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            body = self._branch(stmt.body + stmt.orelse)  # type: ignore[attr-defined]
            handlers = [self._branch(h.body) for h in stmt.handlers]  # type: ignore[attr-defined]
            self._merge(body, *handlers)
            self._block(stmt.finalbody)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Return):
            visit(stmt.value)
            self.return_kinds.append(self.kind(stmt.value) if stmt.value is not None else Kind.NONE)
        elif isinstance(stmt, ast.Match):
            visit(stmt.subject)
            self._merge(self.env, *(self._branch(case.body) for case in stmt.cases))
        elif isinstance(stmt, ast.Assert):
            visit(stmt.test, True)
            visit(stmt.msg)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for name in self.index.import_bindings(stmt):
                self.env[name] = Kind.UNKNOWN
            self._kinds.clear()
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.env[stmt.name] = Kind.UNKNOWN
            self._kinds.clear()
        else:
            for child in child_nodes(stmt):
                if isinstance(child, ast.expr):
                    visit(child)





def _constructor(value: ast.expr, probe: FunctionAnalysis, index: ModuleIndex) -> str:  # "?" unless `Ctor(...)`
    if isinstance(value, ast.Call):
        if isinstance(value.func, ast.Name) and value.func.id in index.classes and value.func.id not in probe.shadowed_names:
            return value.func.id
        qualname = probe.qualified_name(value.func)
        if qualname is not None:
            return qualname
    return "?"


# Conversions that only tensors have (not modules, which have `.float()`/`.half()`, nor NumPy).
_TENSOR_ONLY_CONVERSIONS = {"bool": Kind.BOOL_TENSOR, "long": Kind.TENSOR}


def _as_tuple(call: ast.Call) -> bool:
    return any(k.arg == "as_tuple" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)


def _is_non_numeric_literal(expr: ast.expr) -> bool:
    if isinstance(expr, ast.JoinedStr):
        return True
    return isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, (str, bytes)))


def _subscript_base(expr: ast.expr) -> ast.expr:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def _sole_variable(expr: ast.expr, through_subscript: bool = False) -> tuple[str, bool] | None:
    """The one name in `x * 2`, `-x`, `x[0]`, `(x - 0.5) / 2` (everything else a literal), and
    whether it is reached through a subscript."""
    if isinstance(expr, ast.Name):
        return expr.id, through_subscript
    if isinstance(expr, ast.Subscript):
        return _sole_variable(expr.value, True)
    if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
        return _sole_variable(expr.operand, through_subscript)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.right, ast.Constant):
            return _sole_variable(expr.left, through_subscript)
        if isinstance(expr.left, ast.Constant):
            return _sole_variable(expr.right, through_subscript)
    if isinstance(expr, ast.Compare) and len(expr.comparators) == 1:
        if isinstance(expr.comparators[0], ast.Constant):
            return _sole_variable(expr.left, through_subscript)
        if isinstance(expr.left, ast.Constant):
            return _sole_variable(expr.comparators[0], through_subscript)
    return None
