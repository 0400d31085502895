"""The forward, flow-sensitive walk over a function's statements that keeps the kind of every
local name, offering each node to a visitor with the kinds in force (`Walker`), and
`FunctionAnalysis`, which holds the parts of one function's analysis and is what callers use.
Branches are walked on copies and joined; loop bodies twice, so loop-carried values are seen."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from functools import cached_property
from typing import Any, Protocol

from ..kinds import Env, Kind
from ..regions import Entry
from ..semantics import ClassInfo, FunctionInfo, argument_names, child_nodes, walk
from .bindings import Bindings
from .compile_time import CompileTimeFacts
from .expressions import ExpressionKinds, torch_call_kind
from .parameters import ParameterKinds, annotation_kind
from .scope import Scope
from .state import ModuleFacts


class ExpressionVisitor(Protocol):
    def __call__(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> None: ...


class FunctionAnalysis:
    """One function's analysis as rules, rewrites and the checker see it. It holds the parts, each
    built from what it needs: `scope` (what a name refers to), `parameters` (the kinds parameters
    start with), `kinds` (the kinds in force and of expressions), `facts` (what is fixed under
    compile), `bindings` (how statements change the kinds) and `walker` (the walk); the members
    callers use are forwarded under the names they have always had."""

    def __init__(
        self,
        module: ModuleFacts,
        function: FunctionInfo | None,
        visitor: ExpressionVisitor | None = None,
        with_parameters: bool = True,
        entry: Entry | None = None,
    ) -> None:
        """`with_parameters` False: a probe whose names start unknown but `self` (neither the
        parameters' kinds nor their kept defaults are worked out)."""
        self.module = module
        self.entry = entry  # the compiled entry this function is analysed as part of
        self.index = module.index
        self.function = function
        self.scope = Scope(module, function)
        self.parameters = ParameterKinds(self.scope)
        self.kinds = ExpressionKinds(self.scope, self.parameters.maps_to_tensors)
        from_parameters = function is not None and with_parameters
        if from_parameters:
            self.kinds.env = self.parameters.initial_env()
        kept_defaults = self.parameters.kept_defaults() if from_parameters else {}
        self.facts = CompileTimeFacts(self.scope, self.kinds, entry, kept_defaults)
        self.bindings = Bindings(self.scope, self.kinds, self.facts)
        self.walker = Walker(self, self.scope, self.kinds, self.facts, self.bindings, visitor)
        if function is not None and not with_parameters and self.scope.self_name:
            self.kinds.env[self.scope.self_name] = Kind.SELF

    def run(self) -> None:
        self.walker.run()

    @property
    def env(self) -> Env:
        """The kinds of the names in force at the point the walk has reached."""
        return self.kinds.env

    @env.setter
    def env(self, kinds: Env) -> None:
        self.kinds.env = kinds

    @property
    def visitor(self) -> ExpressionVisitor | None:
        """What each node is offered to (None: the walk only keeps the kinds)."""
        return self.walker.visitor

    @visitor.setter
    def visitor(self, visitor: ExpressionVisitor | None) -> None:
        self.walker.visitor = visitor

    @property
    def return_kinds(self) -> list[Kind]:
        return self.walker.return_kinds

    @property
    def guards(self) -> list[tuple[ast.expr, bool]]:
        """Enclosing Python-decided `if` tests where the walk is, and the side taken."""
        return self.walker.guards

    @property
    def caller_typed(self) -> dict[str, str]:
        return self.parameters.caller_typed

    @property
    def annotation_typed(self) -> dict[str, str]:
        return self.parameters.annotation_typed

    @property
    def shadowed_names(self) -> frozenset[str]:
        return self.scope.shadowed_names

    @property
    def owner(self) -> ClassInfo | None:
        """The class whose method this is (None outside a method)."""
        method = self.function.method if self.function is not None else None
        return method.owner if method is not None else None

    def is_self(self, expr: ast.expr) -> bool:
        return self.scope.is_self(expr)

    def qualified_name(self, expr: ast.expr) -> str | None:
        return self.scope.qualified_name(expr)

    def is_builtin(self, name: str) -> bool:
        return self.scope.is_builtin(name)

    def kind(self, expr: ast.expr) -> Kind:
        return self.kinds.kind(expr)

    def name_kind(self, name: str) -> Kind:
        return self.kinds.name_kind(name)

    @staticmethod
    def torch_call_kind(qualname: str) -> Kind:
        return torch_call_kind(qualname)

    def annotation_kind(self, annotation: ast.expr) -> Kind:
        return annotation_kind(annotation, self.scope)

    def has_tensor_evidence(self, name: str) -> bool:
        return self.parameters.has_tensor_evidence(name)

    def used_as_tensor(self, expr: ast.expr) -> bool:
        """A tensor by its kind, or a name this function uses as a tensor (`x.abs().max()`)."""
        if self.kinds.kind(expr).is_tensor:
            return True
        return isinstance(expr, ast.Name) and self.parameters.has_tensor_evidence(expr.id)

    @property
    def runs_inlined(self) -> bool:
        return self.facts.runs_inlined

    @property
    def captures(self) -> frozenset[str]:
        return self.facts.captures

    def is_data_dependent(self, test: ast.expr) -> bool:
        return self.facts.is_data_dependent(test)

    def ends_in_error(self, body: list[ast.stmt]) -> bool:
        return self.facts.ends_in_error(body)

    def _bind(self, target: ast.expr, kind: Kind, value: ast.expr | None = None) -> None:
        """For the predication rewrite, which replays a branch's assignments (`fixes/predicate/arms.py`)."""
        self.bindings.bind(target, kind, value)


class Walker:
    """The walk over one function's statements: it keeps `kinds.env` up to date, offers every node
    to `visitor` with `analysis`, and collects the kinds returned and the enclosing guards."""

    def __init__(
        self,
        analysis: FunctionAnalysis,
        scope: Scope,
        kinds: ExpressionKinds,
        facts: CompileTimeFacts,
        bindings: Bindings,
        visitor: ExpressionVisitor | None,
    ) -> None:
        self.analysis = analysis  # what the visitor is given
        self.scope = scope
        self.kinds = kinds
        self.facts = facts
        self.bindings = bindings
        self.visitor = visitor
        self.return_kinds: list[Kind] = []
        self.guards: list[tuple[ast.expr, bool]] = []  # enclosing Python-decided `if` tests, and the side taken
        self._depth = 0  # how many branches deep the walk is

    def run(self) -> None:
        if self.scope.function is not None:
            self._block(self.scope.function.node.body)

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
            self.visitor(node, self.analysis, condition)
            if isinstance(node, ast.IfExp):
                constant = self.facts.constant_under_compile(node.test)
                if constant is not None:  # `a if is_torchdynamo_compiling() else b`: one side runs
                    stack.append((node.body if constant else node.orelse, condition))
                    continue
                when_true, when_false = self.bindings.narrowing(node.test)
                if when_true or when_false:  # `x.sum() if x is not None else 0`: each side with what the test says
                    self._visit(node.test, True)
                    for side, narrowed in ((node.body, when_true), (node.orelse, when_false)):
                        saved = self.kinds.env
                        self.kinds.env = {**saved, **narrowed}
                        try:
                            self._visit(side, condition)
                        finally:
                            self.kinds.env = saved
                    continue
                stack.append((node.orelse, condition))
                stack.append((node.body, condition))
                stack.append((node.test, True))
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                self._visit_comprehension(node, condition)
            elif isinstance(node, ast.BoolOp):
                stack.extend((value, condition) for value in reversed(self.facts.evaluated_under_compile(node)))
            else:
                stack.extend((child, condition) for child in reversed(list(child_nodes(node))))

    def _visit_lambda(self, node: ast.Lambda) -> None:
        """A lambda's body, with the kinds in force where it is made (its closure) and its own
        parameters unknown: Dynamo inlines the call, so what breaks in the body breaks there."""
        saved = self.kinds.env
        self.kinds.env = {**saved, **dict.fromkeys(argument_names(node.args), Kind.UNKNOWN)}
        try:
            self._visit(node.body)
        finally:
            self.kinds.env = saved

    @cached_property
    def _called_lambdas(self) -> frozenset[int]:
        function = self.scope.function
        return called_lambdas(function.node) if function is not None else frozenset()

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, condition: bool
    ) -> None:
        saved = dict(self.kinds.env)
        for generator in node.generators:
            self._visit(generator.iter, condition)
            self.bindings.bind_iteration(generator.target, generator.iter)
            for test in generator.ifs:
                self._visit(test, True)
        if isinstance(node, ast.DictComp):
            self._visit(node.key, condition)
            self._visit(node.value, condition)
        else:
            self._visit(node.elt, condition)
        self.kinds.env = saved

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if self.visitor is not None:
                self.visitor(stmt, self.analysis, False)
            _STATEMENTS.get(type(stmt), Walker._other)(self, stmt)
            if isinstance(stmt, ast.If) and self._leaves_under_compile(stmt):
                break  # what follows never runs while Dynamo traces

    def _leaves_under_compile(self, stmt: ast.If) -> bool:
        """`if is_torchdynamo_compiling(): return ...`: the branch compiled code takes returns or raises."""
        constant = self.facts.constant_under_compile(stmt.test)
        taken = stmt.body if constant is True else stmt.orelse if constant is False else None
        return bool(taken) and isinstance(taken[-1], (ast.Return, ast.Raise))  # type: ignore[index]

    def _branch(
        self, body: list[ast.stmt], narrowed: Env | None = None, guard: tuple[ast.expr, bool] | None = None
    ) -> Env:
        """Walk `body` on a copy of the kinds in force (with what the test says, `narrowed`) and
        return the kinds at its end; the kinds in force are left as they were."""
        saved = self.kinds.env
        self.kinds.env = {**saved, **(narrowed or {})}
        self._depth += 1
        if guard is not None:
            self.guards.append(guard)
        try:
            self._block(body)
        finally:
            self._depth -= 1
            if guard is not None:
                self.guards.pop()
        result = self.kinds.env
        self.kinds.env = saved
        return result

    # One method per kind of statement (`_STATEMENTS`), each called after the visitor saw the statement.

    def _assign(self, stmt: ast.Assign) -> None:
        self._visit(stmt.value)
        for target in stmt.targets:
            if not isinstance(target, ast.Name):
                self._visit(target)
        kind = self.kinds.kind(stmt.value)
        for target in stmt.targets:
            self.bindings.bind(target, kind, stmt.value)
        constant = self.facts.constant_under_compile(stmt.value)
        if constant is not None and self._depth == 0:
            self.facts.compile_constants.update((t.id, constant) for t in stmt.targets if isinstance(t, ast.Name))

    def _ann_assign(self, stmt: ast.AnnAssign) -> None:
        self._visit(stmt.value)
        if stmt.value is not None:
            self.bindings.bind(stmt.target, self.kinds.kind(stmt.value), stmt.value)

    def _aug_assign(self, stmt: ast.AugAssign) -> None:
        self._visit(stmt.value)
        if isinstance(stmt.target, ast.Name):
            combined = ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value)
            self.kinds.env[stmt.target.id] = self.kinds.binop_kind(combined)
            self.kinds.forget()
        else:
            self._visit(stmt.target)

    def _if(self, stmt: ast.If) -> None:
        self._visit(stmt.test, True)
        constant = self.facts.constant_under_compile(stmt.test)
        if constant is True:
            self._block(stmt.body)
        elif constant is False:
            self._block(stmt.orelse)
        else:
            when_true, when_false = self.bindings.narrowing(stmt.test)
            visitor = self.visitor
            if self.facts.ends_in_error(stmt.body) and not stmt.orelse:
                self.visitor = None  # the way to an exception: what breaks there does not matter
            static = not self.facts.is_data_dependent(stmt.test)  # a configuration: dtype, training, None...
            try:
                body = self._branch(stmt.body, when_true, (stmt.test, True) if static else None)
            finally:
                self.visitor = visitor
            orelse = self._branch(stmt.orelse, when_false, (stmt.test, False) if static else None)
            self.bindings.merge(body, orelse)

    def _for(self, stmt: ast.For | ast.AsyncFor) -> None:
        self._visit(stmt.iter)
        before = dict(self.kinds.env)
        self._depth += 1  # a loop body may run no time at all
        for _ in range(2):
            self.bindings.bind_iteration(stmt.target, stmt.iter)
            self._block(stmt.body)
            self.bindings.merge(before, self.kinds.env)
        self._depth -= 1
        self._block(stmt.orelse)

    def _while(self, stmt: ast.While) -> None:
        before = dict(self.kinds.env)
        self._depth += 1
        for _ in range(2):
            self._visit(stmt.test, True)
            self._block(stmt.body)
            self.bindings.merge(before, self.kinds.env)
        self._depth -= 1
        self._block(stmt.orelse)

    def _with(self, stmt: ast.With | ast.AsyncWith) -> None:
        for item in stmt.items:
            self._visit(item.context_expr)
            if item.optional_vars is not None:
                self.bindings.bind(item.optional_vars, Kind.UNKNOWN)
        self._block(stmt.body)

    def _try(self, stmt: Any) -> None:  # ast.Try, or ast.TryStar (Python 3.11+)
        body = self._branch(stmt.body + stmt.orelse)
        handlers = [self._branch(h.body) for h in stmt.handlers]
        self.bindings.merge(body, *handlers)
        self._block(stmt.finalbody)

    def _return(self, stmt: ast.Return) -> None:
        self._visit(stmt.value)
        self.return_kinds.append(self.kinds.kind(stmt.value) if stmt.value is not None else Kind.NONE)

    def _match(self, stmt: ast.Match) -> None:
        self._visit(stmt.subject)
        self.bindings.merge(self.kinds.env, *(self._branch(case.body) for case in stmt.cases))

    def _assert(self, stmt: ast.Assert) -> None:
        self._visit(stmt.test, True)
        self._visit(stmt.msg)

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        for name in self.scope.index.import_bindings(stmt):
            self.kinds.env[name] = Kind.UNKNOWN
        self.kinds.forget()

    def _definition(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.kinds.env[stmt.name] = Kind.UNKNOWN
        self.kinds.forget()

    def _other(self, stmt: ast.stmt) -> None:
        for child in child_nodes(stmt):
            if isinstance(child, ast.expr):
                self._visit(child)


# The walk of each kind of statement, by its exact type (no `ast` statement type has subclasses).
_STATEMENTS: dict[type[ast.stmt], Callable[[Walker, Any], None]] = {
    ast.Assign: Walker._assign,
    ast.AnnAssign: Walker._ann_assign,
    ast.AugAssign: Walker._aug_assign,
    ast.If: Walker._if,
    ast.For: Walker._for,
    ast.AsyncFor: Walker._for,
    ast.While: Walker._while,
    ast.With: Walker._with,
    ast.AsyncWith: Walker._with,
    ast.Try: Walker._try,
    ast.Return: Walker._return,
    ast.Match: Walker._match,
    ast.Assert: Walker._assert,
    ast.Import: Walker._import,
    ast.ImportFrom: Walker._import,
    ast.FunctionDef: Walker._definition,
    ast.AsyncFunctionDef: Walker._definition,
    ast.ClassDef: Walker._definition,
}
if sys.version_info >= (3, 11):  # `except*`
    _STATEMENTS[ast.TryStar] = Walker._try


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
