"""What is fixed while Dynamo traces: `torch.compiler.is_compiling()` and what follows from it,
which operands of an `and`/`or` run then, and whether a test reads a tensor's value."""

from __future__ import annotations

import ast
from collections.abc import Callable

from .. import torch_api
from ..kinds import TENSORISH, Kind
from ..regions import Entry
from ..semantics import FunctionInfo
from .expressions import ExpressionKinds
from .scope import Scope


def only_return(function: FunctionInfo) -> ast.expr | None:
    """The value of a function whose body (its docstring aside) is one `return`."""
    body = [s for s in function.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    return body[0].value


def returned_compile_constant(function: FunctionInfo, qualified: Callable[[ast.expr], str | None]) -> bool | None:
    """What a function returns under compile when its body is one `return` of a value fixed then
    (`return torch.compiler.is_compiling()`, `not ...`, `and`/`or` of such), or a flag set to True
    then and only ever `|=`-ed before it is returned (transformers 5.x's `is_tracing`): for other
    files' calls."""

    def library_guard(leaf: ast.expr) -> bool | None:
        if isinstance(leaf, ast.Call) and not leaf.args and not leaf.keywords:
            return _library_guard(qualified(leaf.func))
        return None

    value = only_return(function)
    if value is not None:
        return three_valued(value, library_guard)
    flag = _accumulated_flag(function)
    return True if flag is not None and three_valued(flag, library_guard) is True else None


def _accumulated_flag(function: FunctionInfo) -> ast.expr | None:
    """`flag = <value>`, then only `flag |= ...` (alone or in `if` blocks), then `return flag`:
    the first value, which decides the result when it is True."""
    body = [s for s in function.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) < 2 or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Name):
        return None
    name = body[-1].value.id
    first = body[0]
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
        return None
    if first.targets[0].id != name:
        return None

    def only_ors(statements: list[ast.stmt]) -> bool:
        return all(
            (
                isinstance(s, ast.AugAssign)
                and isinstance(s.op, ast.BitOr)
                and isinstance(s.target, ast.Name)
                and s.target.id == name
            )
            or (isinstance(s, ast.If) and only_ors(s.body) and only_ors(s.orelse))
            for s in statements
        )

    return first.value if only_ors(body[1:-1]) else None


def three_valued(test: ast.expr, leaf: Callable[[ast.expr], bool | None]) -> bool | None:
    """The truth of `test` where `leaf` decides its operands (True, False, or None: unknown):
    `not` flips it, a True decides an `or` and a False an `and` whatever the others are."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = three_valued(test.operand, leaf)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [three_valued(v, leaf) for v in test.values]
        decisive = isinstance(test.op, ast.Or)
        if decisive in values:
            return decisive
        return (not decisive) if all(v is (not decisive) for v in values) else None
    return leaf(test)


def _library_guard(qualname: str | None) -> bool | None:
    """`torch.compiler.is_compiling()` and its kin are True under compile, `torch.jit.is_scripting()` False."""
    if qualname in torch_api.IS_COMPILING_FUNCTIONS:
        return True
    if qualname in torch_api.IS_SCRIPTING_FUNCTIONS:
        return False
    return None


class CompileTimeFacts:
    """Truths decided under compile, and whether deciding a test needs data."""

    def __init__(
        self, scope: Scope, kinds: ExpressionKinds, entry: Entry | None, parameter_values: dict[str, object]
    ) -> None:
        """`entry`: the compiled entry the function is analysed as part of; `parameter_values`:
        parameters that hold their literal default (`ParameterKinds.kept_defaults`)."""
        self.scope = scope
        self.kinds = kinds
        self.entry = entry
        self.function = scope.function
        self.compile_constants: dict[str, bool] = {}  # names bound at the top to a value fixed under compile
        self.parameter_values = parameter_values  # (until rebound)

    def rebound(self, name: str) -> None:
        """`name` is bound anew: it no longer holds what it held under compile, nor its default."""
        self.compile_constants.pop(name, None)
        self.parameter_values.pop(name, None)

    @property
    def runs_inlined(self) -> bool:
        """Dynamo inlines this function into a compiled frame rather than compiling it as one: it is
        reached through a call, or compiled code of another file calls it."""
        entry = self.entry
        return entry is not None and (
            entry.called or (self.function is not None and self.function is not entry.function)
        )

    @property
    def captures(self) -> frozenset[str]:
        """Dynamo capture settings the compiled entry runs under (`capture_scalar_outputs`...)."""
        return self.entry.captures if self.entry is not None else frozenset()

    def is_data_dependent(self, test: ast.expr) -> bool:
        """Whether Python must read a tensor's value to decide this condition's truth."""
        if isinstance(test, ast.BoolOp):
            return any(self.is_data_dependent(value) for value in self.evaluated_under_compile(test))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.is_data_dependent(test.operand)
        # NumPy in compiled code is traced as tensors (torch._numpy): a test of its values breaks
        # the same way (measured: `if idxs.max() > n - 1:` on a NumPy array, gb0170).
        return self.kinds.kind(test) in (*TENSORISH, Kind.NUMPY, Kind.TENSOR_ON_SOME_PATHS)

    def ends_in_error(self, body: list[ast.stmt]) -> bool:
        """A block that ends in `raise` or `torch._assert(False, ...)`: it runs only on the way to an error."""
        last = body[-1] if body else None
        if isinstance(last, ast.Raise):
            return True
        return (
            isinstance(last, ast.Expr)
            and isinstance(last.value, ast.Call)
            and self.scope.qualified_name(last.value.func) == "torch._assert"
            and bool(last.value.args)
            and isinstance(last.value.args[0], ast.Constant)
            and last.value.args[0].value is False
        )

    def constant_under_compile(self, test: ast.expr, seen: frozenset[str] = frozenset()) -> bool | None:
        """The truth of `test` while Dynamo traces, when it is fixed: `torch.compiler.is_compiling()`
        is True, `not ...` of it False, `a or <True>` True and `a and <False>` False whatever `a` is,
        and a name bound to such a value at the top of the function keeps it."""
        return three_valued(test, lambda leaf: self._fixed_leaf(leaf, seen))

    def _fixed_leaf(self, test: ast.expr, seen: frozenset[str]) -> bool | None:
        if isinstance(test, ast.Name):
            if test.id in self.parameter_values:
                return bool(self.parameter_values[test.id])
            return self.compile_constants.get(test.id)
        if isinstance(test, ast.Compare):
            return self._compared_default(test)
        if isinstance(test, ast.Call):
            qualname = self.scope.qualified_name(test.func)
            known = _library_guard(qualname)
            if known is not None:
                return known
            # A wrapper in another file; its value does not depend on arguments, so names and constants
            # (whose evaluation does nothing) may be passed (`is_tracing(mask)`).
            plain = all(
                isinstance(a, (ast.Name, ast.Constant)) for a in (*test.args, *(k.value for k in test.keywords))
            )
            if qualname is not None and plain:
                guard = self.scope.module.regions.context.compile_guard(qualname)
                if guard is not None:
                    return guard
            return self._guard_function(test, seen)
        return None

    def _compared_default(self, test: ast.Compare) -> bool | None:
        """`zero_division == "warn"` where `zero_division` holds its default 0.0: False."""
        if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Name) and isinstance(left, ast.Constant):
            left, right = right, left
        if not (isinstance(left, ast.Name) and left.id in self.parameter_values and isinstance(right, ast.Constant)):
            return None
        value, other = self.parameter_values[left.id], right.value
        same = value is other if isinstance(test.ops[0], (ast.Is, ast.IsNot)) else value == other
        return same if isinstance(test.ops[0], (ast.Eq, ast.Is)) else not same

    def _guard_function(self, call: ast.Call, seen: frozenset[str]) -> bool | None:
        """A module-level function of this file whose body returns a value fixed under compile (a
        user's own `def is_compiling(): return torch.compiler.is_compiling()`): its call is too."""
        func = call.func
        if call.args or call.keywords or not isinstance(func, ast.Name) or func.id in seen:
            return None
        if func.id in self.scope.local_names:
            return None  # a local name, not the module-level function
        function = self.scope.index.functions.get(func.id)
        if function is None or function.owner is not None or function.parent is not None:
            return None
        value = only_return(function)
        return None if value is None else self.constant_under_compile(value, seen | {func.id})

    def evaluated_under_compile(self, node: ast.BoolOp) -> list[ast.expr]:
        """The operands Python evaluates while Dynamo traces: none after one that decides the
        `and`/`or` under compile (`not is_torchdynamo_compiling() and x[m].numel() > 0`)."""
        decisive = isinstance(node.op, ast.Or)
        for index, value in enumerate(node.values):
            if self.constant_under_compile(value) is decisive:
                return node.values[: index + 1]
        return node.values
