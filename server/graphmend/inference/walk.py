"""`FunctionAnalysis`: the forward, flow-sensitive walk over a function's statements that keeps
the kind of every local name, offering each expression to a visitor with the kinds in force.
Branches are walked on copies and joined; loop bodies twice, so loop-carried values are seen."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Protocol

from ..kinds import Env, Kind, join
from ..regions import Entry, bound_names
from ..semantics import FunctionInfo, argument_names, child_nodes, walk
from .parameters import ParameterKinds, parameters_with_defaults
from .state import ModuleFacts


class ExpressionVisitor(Protocol):
    def __call__(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> None: ...


class FunctionAnalysis(ParameterKinds):
    """Kinds of the names of one function, walked statement by statement."""

    def __init__(
        self,
        module: ModuleFacts,
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
        self._kinds: dict[int, Kind] = {}
        self.caller_typed: dict[str, str] = {}
        self.annotation_typed: dict[str, str] = {}
        self._env: Env = self._parameter_kinds() if (function and with_parameters) else {}
        self.compile_constants: dict[str, bool] = {}
        self.parameter_values: dict[str, object] = self._kept_defaults() if (function and with_parameters) else {}
        self._depth = 0  # how many branches deep the walk is
        self.guards: list[tuple[ast.expr, bool]] = []  # enclosing Python-decided `if` tests, and the side taken
        if function is not None and not with_parameters and self.self_name:
            self.env[self.self_name] = Kind.SELF

    def _kept_defaults(self) -> dict[str, object]:
        """Parameters no call in the project passes (a library function reached only through the
        project's calls, `ProjectContext.unpassed_parameters`) → their literal defaults. A
        parameter rebound in a loop is left out: the walk sees a loop body before its rebinding."""
        assert self.function is not None
        unpassed = self.module.regions.context.parameters_unpassed(self.function.qualname)
        if not unpassed:
            return {}
        in_loops = {
            name
            for loop in walk(self.function.node)
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While))
            for stmt in loop.body
            for name in bound_names(stmt)
        }
        return {
            arg.arg: default.value
            for arg, default in parameters_with_defaults(self.function.node.args)
            if arg.arg in unpassed
            and arg.arg not in in_loops
            and isinstance(default, ast.Constant)
            and isinstance(default.value, (str, int, float, bool, type(None)))
        }

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
                if id(node) in self._called_lambdas:
                    self._visit_lambda(node)
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

    def _visit_lambda(self, node: ast.Lambda) -> None:
        """A lambda's body, with the kinds in force where it is made (its closure) and its own
        parameters unknown: Dynamo inlines the call, so what breaks in the body breaks there."""
        saved = self.env
        self.env = {**saved, **dict.fromkeys(argument_names(node.args), Kind.UNKNOWN)}
        self._kinds.clear()
        try:
            self._visit(node.body)
        finally:
            self.env = saved
            self._kinds.clear()

    @cached_property
    def _called_lambdas(self) -> frozenset[int]:
        return called_lambdas(self.function.node) if self.function is not None else frozenset()

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
        if (
            call is not None
            and isinstance(target, (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *call.args])
            and self.is_builtin(call.func.id)  # type: ignore[attr-defined]
        ):
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
            self.parameter_values.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for element, element_value in zip(target.elts, value.elts):
                    self._bind(element, self.kind(element_value), element_value)
                return
            element_kind = Kind.TENSOR if kind.is_tensor else Kind.UNKNOWN
            for element in target.elts:
                self._bind(
                    element.value if isinstance(element, ast.Starred) else element,
                    Kind.UNKNOWN if isinstance(element, ast.Starred) else element_kind,
                )
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
            if not (
                isinstance(right, ast.Constant) and right.value is None and isinstance(part.ops[0], (ast.Is, ast.IsNot))
            ):
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
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and self.is_builtin("isinstance")
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and self.qualified_name(test.args[1]) == "torch.Tensor"
        ):
            return test.args[0].id
        return None

    def _branch(
        self, body: list[ast.stmt], narrowed: Env | None = None, guard: tuple[ast.expr, bool] | None = None
    ) -> Env:
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


_CALLING_BUILTINS = frozenset({"map", "filter", "sorted", "min", "max"})  # they call a function they are given


def called_lambdas(function: ast.AST) -> frozenset[int]:
    """The lambdas a function makes and calls itself (ids): called where made, bound to a local
    name that is called, or kept in a list, tuple or dict literal bound to a local name that is
    indexed or iterated (kornia's ColorJitter: `t = transforms[idx]; t(img)`), or given to a builtin
    that calls them (`sorted(key=...)`). A lambda handed elsewhere (a hook, a stored callback) may
    never run under compile: it is not taken."""
    held: dict[str, list[ast.Lambda]] = {}
    called: set[int] = set()
    used: set[str] = set()
    for node in walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            elements = (
                value.values
                if isinstance(value, ast.Dict)
                else value.elts
                if isinstance(value, (ast.List, ast.Tuple))
                else [value]
            )
            lambdas = [e for e in elements if isinstance(e, ast.Lambda)]
            if lambdas:
                held.setdefault(node.targets[0].id, []).extend(lambdas)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Lambda):
                called.add(id(node.func))
            elif isinstance(node.func, ast.Name):
                used.add(node.func.id)
                if node.func.id in _CALLING_BUILTINS:
                    for given in [*node.args, *(k.value for k in node.keywords)]:
                        if isinstance(given, ast.Lambda):
                            called.add(id(given))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            used.add(node.value.id)
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Name):
            used.add(node.iter.id)
    return frozenset(called | {id(lam) for name in used & held.keys() for lam in held[name]})
