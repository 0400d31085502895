"""Which values a program may hold as tensors where a Python number is looked for. A tensor's value
is not guarded (Dynamo reads it in the graph), so a rate that is a tensor recompiles nothing: one
made with `torch.tensor(0.01)` and changed with `fill_`, or the rates a scheduler gives an optimizer
built with `lr=torch.tensor(...)` (`get_last_lr()` returns clones of the tensors). And
`torch.tensor(t)` of a tensor copies it with a warning at every call (measured on torch 2.13)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..regions.scope_facts import assigned_value
from ..torch_api import (
    BOOL_TENSOR_FUNCTIONS,
    SCALAR_METHODS,
    TENSOR_FUNCTIONS,
    TENSOR_METHODS,
    TENSOR_NAMESPACES,
    TENSOR_PYTHON_METHODS,
)
from .program import Program, Scope
from .syntax import all_args, argument_for, parameter_position, target_names

OPTIMIZERS = "torch.optim."
SCHEDULERS = "torch.optim.lr_scheduler."
_DEFAULT_RATE = ast.Constant(1e-3)  # every torch optimizer's default `lr` is a float
_DEPTH = 3  # callers of callers followed for a parameter


class Tensors:
    """Answers "may this value be a tensor" for one program. `reason` finds what shows it is one on
    some path (a torch call that makes one, a name bound to one or changed in place as one, a rate
    of an optimizer built with one); with `unknown=True` it also says where the program cannot tell:
    a rate of a scheduler whose optimizer it does not see, a same-file helper passed a value of no
    known number kind (`number_kind`, the kinds' own `NumberKinds.of`)."""

    def __init__(self, program: Program, number_kind: Callable[[ast.expr, Scope], str | None]) -> None:
        self.program = program
        self.number_kind = number_kind

    def reason(self, expr: ast.expr, scope: Scope, unknown: bool = False) -> str | None:
        """Why `expr`, evaluated in `scope`, may be a tensor, or None."""
        return self._reason(expr, scope, unknown, frozenset(), _DEPTH)

    def _reason(self, expr: ast.expr, scope: Scope, unknown: bool, resolving: frozenset[str], depth: int) -> str | None:
        """`resolving`: the names being resolved (a recurrence, `lr = lr * 0.9`, adds nothing) and a
        helper's parameters (its caller's arguments stand for them); `depth`: how many more calls
        a parameter is followed to."""
        if isinstance(expr, ast.Name):
            return self._name(expr.id, scope, unknown, resolving, depth)
        if isinstance(expr, ast.Subscript) and _reads_last_rates(expr):
            return self._scheduler_rates(expr.value.func.value, scope, unknown, depth)  # type: ignore[attr-defined]
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, unknown, resolving, depth)
        if isinstance(expr, ast.BinOp):
            parts = [expr.left, expr.right]
        elif isinstance(expr, ast.UnaryOp):
            parts = [expr.operand]
        elif isinstance(expr, ast.IfExp):
            parts = [expr.body, expr.orelse]
        elif isinstance(expr, ast.Subscript):
            parts = [expr.value]  # an element of a tensor is one
        elif isinstance(expr, (ast.List, ast.Tuple)):
            parts = list(expr.elts)  # what a loop over it, or an index into it, gives
        else:
            return None
        return next((r for part in parts if (r := self._reason(part, scope, unknown, resolving, depth))), None)

    def _call(self, call: ast.Call, scope: Scope, unknown: bool, resolving: frozenset[str], depth: int) -> str | None:
        func = call.func
        qualified = self.program.qualified(func) or ""
        name = qualified.rsplit(".", 1)[-1]
        if (qualified == f"torch.{name}" and name in TENSOR_FUNCTIONS | BOOL_TENSOR_FUNCTIONS) or qualified.startswith(
            TENSOR_NAMESPACES
        ):
            return f"`{ast.unparse(call)}` is a tensor"
        if (
            isinstance(func, ast.Attribute)
            and func.attr in TENSOR_METHODS
            and func.attr not in TENSOR_PYTHON_METHODS | SCALAR_METHODS
        ):  # `lr.clone()`, `rate.mul(0.9)`: a tensor when what it is called on is one
            return self._reason(func.value, scope, unknown, resolving, depth)
        if not isinstance(func, ast.Name) or func.id in resolving:
            return None
        helper = self.program.index.functions.get(func.id)
        if helper is None:
            return None
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            inner = self._reason(argument, scope, unknown, resolving, depth)
            if inner is not None:
                return f"`{func.id}` is passed `{ast.unparse(argument)}`: {inner}"
            if unknown and self.number_kind(argument, scope) is None:
                return f"`{func.id}` is passed `{ast.unparse(argument)}`, not known to be a Python number"
        inside = resolving | {func.id} | {a.arg for a in all_args(helper.node)}  # its parameters: the arguments
        for returned in (n.value for n in ast.walk(helper.node) if isinstance(n, ast.Return) and n.value is not None):
            inner = self._reason(returned, helper.node, unknown, inside, depth)
            if inner is not None:
                return f"`{func.id}` returns `{ast.unparse(returned)}`: {inner}"
        return None

    def _name(self, name: str, scope: Scope, unknown: bool, resolving: frozenset[str], depth: int) -> str | None:
        if name in resolving:
            return None
        inner = resolving | {name}
        bound = False
        for node in self.program.own_nodes(scope):
            value: ast.expr | None = None
            if isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                bound, value = True, assigned_value(node, name) if len(node.targets) == 1 else None
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and name in target_names(node.target):
                bound, value = True, node.value
            elif isinstance(node, (ast.For, ast.AsyncFor)) and name in target_names(node.target):
                bound, value = True, node.iter  # an element of a tensor (or of a list of them)
            elif _changed_in_place(node, name):
                return f"`{ast.unparse(node)}` at line {node.lineno} changes `{name}` in place, as a tensor"  # type: ignore[attr-defined]
            found = self._reason(value, scope, unknown, inner, depth) if value is not None else None
            if found is not None:
                return f"`{name}` is set at line {node.lineno}: {found}"  # type: ignore[attr-defined]
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {a.arg for a in all_args(scope)}:
            position = parameter_position(scope, name)
            for call, outer in self.program.calls_of(scope) if depth and position is not None else ():
                passed = argument_for(call, position, name)  # type: ignore[arg-type]
                found = self._reason(passed, outer, unknown, frozenset(), depth - 1) if passed is not None else None
                if found is not None:
                    return f"`{scope.name}` is called with `{ast.unparse(passed)}` at line {call.lineno}: {found}"  # type: ignore[arg-type]
            return None
        if not bound and not isinstance(scope, ast.Module):  # a free name: the module's
            return self._name(name, self.program.index.tree, unknown, resolving, depth)
        return None

    # -- optimizers and their schedulers ----------------------------------------------------------

    def optimizer_rate(self, name: str, scope: Scope) -> tuple[ast.expr, Scope] | None:
        """The `lr` the torch optimizer bound to `name` is built with (its default, a float, when
        not given) and the scope it is written in; None when `name` is not bound once to one."""
        made = self.bound_call(name, scope)
        if made is None:
            return None
        call, where = made
        qualified = self.program.qualified(call.func) or ""
        if not qualified.startswith(OPTIMIZERS) or qualified.startswith(SCHEDULERS):
            return None
        rate = next((k.value for k in call.keywords if k.arg == "lr"), None)
        if rate is None and len(call.args) > 1 and not any(isinstance(a, ast.Starred) for a in call.args[:2]):
            rate = call.args[1]
        if rate is None and any(k.arg is None for k in call.keywords):  # `**options` may hold `lr`
            return None
        return (rate if rate is not None else _DEFAULT_RATE), where

    def _scheduler_rates(self, scheduler: ast.expr, scope: Scope, unknown: bool, depth: int) -> str | None:
        """Why the rates `scheduler.get_last_lr()` returns may be tensors: they are its optimizer's
        `lr` values, tensors when it was built with one; with `unknown`, also where the optimizer or
        its `lr` is not known here."""
        made = self.bound_call(scheduler.id, scope) if isinstance(scheduler, ast.Name) else None
        optimizer = None
        if made is not None:
            optimizer = next((k.value for k in made[0].keywords if k.arg == "optimizer"), None)
            optimizer = optimizer or (made[0].args[0] if made[0].args else None)
        rate = self.optimizer_rate(optimizer.id, made[1]) if made and isinstance(optimizer, ast.Name) else None
        if rate is None:
            unseen = f"the optimizer `{ast.unparse(scheduler)}` schedules is not known here"
            return f"{unseen}, and its `lr` may be a tensor" if unknown else None
        lr = f"`{ast.unparse(optimizer)}` is built with `lr={ast.unparse(rate[0])}`"  # type: ignore[arg-type]
        found = self._reason(rate[0], rate[1], unknown, frozenset(), depth)
        if found is None and unknown and self.number_kind(rate[0], rate[1]) is None:
            return f"{lr}, not known to be a Python number"
        return f"{lr}: {found}" if found is not None else None

    def bound_call(self, name: str, scope: Scope) -> tuple[ast.Call, Scope] | None:
        """The call `name` is bound to by its one assignment in `scope` (the module's for a name the
        scope does not bind), with the scope it is written in."""
        values: list[ast.expr | None] = []
        for node in self.program.own_nodes(scope):
            if isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                values.append(assigned_value(node, name) if len(node.targets) == 1 else None)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)) and name in target_names(
                node.target
            ):
                values.append(node.value if isinstance(node, ast.AnnAssign) else None)
        if not values and not isinstance(scope, ast.Module):
            return self.bound_call(name, self.program.index.tree)
        if len(values) == 1 and isinstance(values[0], ast.Call):
            return values[0], scope
        return None


def _reads_last_rates(expr: ast.Subscript) -> bool:
    """`scheduler.get_last_lr()[i]`."""
    call = expr.value
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "get_last_lr"


def _changed_in_place(node: ast.AST, name: str) -> bool:
    """`name.fill_(...)`, `name.mul_(...)`: a tensor method that changes `name` in place."""
    func = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == name
        and func.attr.endswith("_")
        and not func.attr.endswith("__")
        and func.attr in TENSOR_METHODS
    )
