"""`ModuleAnalysis`: the facts the functions of one file share, cached: return kinds, kinds at a
function's end (for closures), the kinds of `self.` attributes, what `__init__` binds, and which
parameters callers pass NumPy values."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from ..kinds import Env, Kind, join
from ..regions import CompiledRegions
from ..semantics import BOUND, ClassInfo, FunctionInfo, ModuleIndex, init_bindings, walk
from .walk import FunctionAnalysis


class ModuleAnalysis:
    """Shared, cached facts for all functions of one module."""

    def __init__(
        self, index: ModuleIndex, regions: CompiledRegions, torch_version: tuple[int, int] | None = None
    ) -> None:
        self.index = index
        self.regions = regions
        self.torch_version = torch_version  # the torch the code runs on (None: unknown, taken as 2.13)
        self._return_kinds: dict[int, Kind] = {}
        self._in_progress: set[int] = set()
        self._class_attributes: dict[int, dict[str, Kind]] = {}
        self._init_values: dict[int, dict[str, list[tuple[FunctionInfo, ast.expr | None]]]] = {}
        self._constructors: dict[int, dict[str, frozenset[str]]] = {}
        self._final_envs: dict[int, Env] = {}
        self._numpy_parameters: dict[int, frozenset[str]] = {}
        self._entry_tensors: dict[int, frozenset[str]] = {}
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
            if not kinds and analysis.ends_in_error(function.node.body):
                # An abstract method (`raise NotImplementedError`): what the subclass's override
                # returns, known only by the annotation (kornia's `transform_tensor(...) -> Tensor`).
                returns = function.node.returns
                kinds = [analysis.annotation_kind(returns) if returns is not None else Kind.UNKNOWN]
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
        found: set[str] = set()
        for caller, call in self._callers_with_numpy().get(key, []):
            found |= _passed(call, function, _probe_at_end(self, caller), _is_numpy)
        self._numpy_parameters[key] = frozenset(found)
        return self._numpy_parameters[key]

    def entry_tensor_parameters(self, function: FunctionInfo) -> frozenset[str]:
        """Parameters of a compiled function that a call of this file running it as its frame passes a
        tensor (`step(x, torch.tensor(2))`): Dynamo receives a tensor there, so `x[:n]` reads its
        value (gb0124) and `if n > 1` branches on it."""
        key = id(function.node)
        if key not in self._entry_tensors:
            self._entry_tensors[key] = frozenset()  # a call inside the function itself sees none
            found: set[str] = set()
            for caller, call in self.regions.calls_of_entry(function):
                found |= _passed(
                    call, function, self._probe(caller), lambda kind: kind in (Kind.TENSOR, Kind.BOOL_TENSOR)
                )
            self._entry_tensors[key] = frozenset(found)
        return self._entry_tensors[key]

    def _probe(self, caller: FunctionInfo | None) -> FunctionAnalysis:
        """An analysis that knows the kinds at the end of `caller` (None: the module's top level)."""
        if caller is not None:
            return _probe_at_end(self, caller)
        probe = FunctionAnalysis(self, None)
        probe.env = dict(self.module_env)
        return probe

    def numpy_call_lines(self, function: FunctionInfo, seen: frozenset[int] = frozenset()) -> list[int]:
        """Lines of this file's calls of `function` that pass it a NumPy value: from functions that
        call NumPy, from module-level code (`arr = squash(np.ones(3))`), and through a caller's own
        parameter where that caller is called so (`def prepare(a): return squash(a)`, then
        `prepare(np.ones(3))`: the line of that outer call)."""
        lines = {
            call.lineno
            for caller, call in self._callers_with_numpy().get(id(function.node), [])
            if _passed(call, function, _probe_at_end(self, caller), _is_numpy)
        }
        if function.owner is None:
            probe = self._probe(None)
            for stmt in self.index.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                for call in walk(stmt):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Name)
                        and call.func.id == function.node.name
                        and _passed(call, function, probe, _is_numpy)
                    ):
                        lines.add(call.lineno)
        for caller, call in self._callers_of(function):
            if id(caller.node) in seen or not _passes_own_parameter(call, caller):
                continue
            lines.update(self.numpy_call_lines(caller, seen | {id(function.node)}))
        return sorted(lines)

    def _callers_of(self, function: FunctionInfo) -> list[tuple[FunctionInfo, ast.Call]]:
        """The same-file functions that call `function`, with each call."""
        return [
            (caller, call)
            for caller in self.index.all_functions
            for call, callee in self.regions.same_file_calls(caller)
            if callee.node is function.node
        ]

    def _callers_with_numpy(self) -> dict[int, list[tuple[FunctionInfo, ast.Call]]]:
        """callee → (caller, call) for the same-file calls made by functions that call NumPy."""
        if self._numpy_callers is None:
            self._numpy_callers = {}
            probe = FunctionAnalysis(self, None)
            for caller in self.index.all_functions:
                calls = list(self.regions.same_file_calls(caller))
                if not calls or not any(
                    (probe.qualified_name(c.func) or "").startswith("numpy.") for c in self.regions.calls_in(caller)
                ):  # its own body's calls
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


def _constructor(value: ast.expr, probe: FunctionAnalysis, index: ModuleIndex) -> str:  # "?" unless `Ctor(...)`
    if isinstance(value, ast.Call) and _may_be_in_place(value):
        return "?"  # `nn.ReLU(inplace=True)` writes its input: not the layer the purity table knows
    if isinstance(value, ast.Call):
        if (
            isinstance(value.func, ast.Name)
            and value.func.id in index.classes
            and value.func.id not in probe.shadowed_names
        ):
            return value.func.id
        qualname = probe.qualified_name(value.func)
        if qualname is not None:
            return qualname
    return "?"


def _may_be_in_place(call: ast.Call) -> bool:
    """A layer built with `inplace=` anything but a literal False, or with `**options` that may hold
    it (a positional `inplace` is read with torch's signatures in `analysis.purity`)."""
    return any(
        k.arg is None or (k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and k.value.value is False))
        for k in call.keywords
    )


def _passes_own_parameter(call: ast.Call, caller: FunctionInfo) -> bool:
    """`call` passes one of `caller`'s parameters as it is (`squash(a)` in `def prepare(a)`)."""
    passed = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(a, ast.Name) and a.id in caller.parameter_names for a in passed)


def _probe_at_end(module: ModuleAnalysis, caller: FunctionInfo) -> FunctionAnalysis:
    probe = FunctionAnalysis(module, caller)
    probe.env = dict(module.final_env(caller))
    return probe


def _is_numpy(kind: Kind) -> bool:
    return kind is Kind.NUMPY


def _passed(
    call: ast.Call, function: FunctionInfo, probe: FunctionAnalysis, wanted: Callable[[Kind], bool]
) -> set[str]:
    """The parameters of `function` that `call` passes a value of a `wanted` kind, by the kinds `probe` knows."""
    args = function.node.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    decorators = {d.id for d in function.node.decorator_list if isinstance(d, ast.Name)}
    if function.owner is not None and "staticmethod" not in decorators:
        positional = positional[1:]  # `self` / `cls` is bound
    names = set(positional) | {a.arg for a in args.kwonlyargs}
    found: set[str] = set()
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        if position < len(positional) and wanted(probe.kind(argument)):
            found.add(positional[position])
    return found | {k.arg for k in call.keywords if k.arg in names and wanted(probe.kind(k.value))}
