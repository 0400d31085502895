"""What kind of Python number an expression is, as a program shows it: "int", "float", "bool",
or "number" when it is one of unknown kind (a loop over `range`, a literal, `len()`, arithmetic of
numbers, a same-file function returning one, a schedule's rate); None for anything else, a value
that may be a tensor included (`tensors.py`: a tensor's value is not guarded)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..regions.scope_facts import assigned_value
from .program import Program, Scope
from .syntax import all_args, bound_by, target_names
from .tensors import Tensors

_CYCLE = "cycle"  # the kind of a name read while its own kind is found: no kind of its own
_CONVERSIONS = {"len": "int", "int": "int", "float": "float", "bool": "bool"}  # a Python number whatever the argument
_NUMBER_FUNCTIONS = frozenset({"round", "min", "max", "abs"})  # a number when their arguments are
_RANDOM_NUMBERS = {
    "random.random": "float",
    "random.uniform": "float",
    "random.randint": "int",
    "random.randrange": "int",
}


@dataclass(frozen=True)
class Change:
    """A Python number that changes between iterations of `loop`: what it is (`int`, `float`,
    `bool`, or `number` when unknown) and the line that makes it change."""

    kind: str
    why: str
    line: int
    loop: ast.AST


class NumberKinds:
    """The number kinds of one program's expressions (see the module docstring)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.tensors = Tensors(program, self.of)  # which values may be tensors instead

    def of(self, expr: ast.expr, scope: Scope, resolving: frozenset[str] = frozenset()) -> str | None:
        """The kind of Python number `expr` is ("int", "float", "bool", "number"), else None (a
        tensor, an object, or not known). `resolving`: the names whose kind is being found (a name
        read in its own update, `eps = eps * 0.9`, adds nothing to its kind: `_CYCLE`)."""
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bool):
                return "bool"
            if isinstance(expr.value, int):
                return "int"
            return "float" if isinstance(expr.value, float) else None
        if isinstance(expr, (ast.Compare, ast.BoolOp)) or (
            isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)
        ):  # a Python bool only when what it compares is Python numbers (`torch.rand(n) < p` is a tensor)
            operands = (
                [expr.left, *expr.comparators]
                if isinstance(expr, ast.Compare)
                else expr.values
                if isinstance(expr, ast.BoolOp)
                else [expr.operand]
            )
            return "bool" if self._all_numbers(operands, scope, resolving) else None
        if isinstance(expr, ast.IfExp):  # `2 if epoch < 2 else 1`
            branches = {self.of(side, scope, resolving) for side in (expr.body, expr.orelse)} - {_CYCLE}
            if None in branches or self.of(expr.test, scope, resolving) is None:
                return None
            return branches.pop() if len(branches) == 1 else "float" if branches <= {"int", "float"} else "number"
        if isinstance(expr, ast.UnaryOp):
            return self.of(expr.operand, scope, resolving)
        if isinstance(expr, ast.BinOp):
            kinds = [k for k in (self.of(side, scope, resolving) for side in (expr.left, expr.right)) if k != _CYCLE]
            if None in kinds:
                return None
            if not kinds:
                return _CYCLE
            if "float" in kinds or isinstance(expr.op, ast.Div):
                return "float"
            return "int" if all(k in ("int", "bool") for k in kinds) else "number"
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Name) and func.id in _CONVERSIONS:
                return _CONVERSIONS[func.id]
            if isinstance(func, ast.Name) and func.id in _NUMBER_FUNCTIONS:  # `max(0.05, eps)`, not `sum(losses)`
                return "number" if expr.args and self._all_numbers(expr.args, scope, resolving) else None
            if isinstance(func, ast.Attribute) and func.attr == "item":
                return "number"
            returned = self._returned_kind(expr, scope, resolving)
            if returned is not None:
                return returned
            qualified = self.program.qualified(func)
            if qualified == "random.choice" and expr.args:  # `random.choice([64, 96, 128])`
                return self._element_kind(expr.args[0], scope)
            if qualified in _RANDOM_NUMBERS:
                return _RANDOM_NUMBERS[qualified]
            if qualified is not None and qualified.startswith("math.") and qualified not in ("math.floor", "math.ceil"):
                return "float"
            if qualified in ("math.floor", "math.ceil"):
                return "int"
            return None
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call):
            func = expr.value.func
            if isinstance(func, ast.Attribute) and func.attr == "get_last_lr":  # a tensor for a tensor `lr`
                return None if self.tensors.reason(expr, scope) is not None else "float"
            return None
        if isinstance(expr, ast.Name):
            return _CYCLE if expr.id in resolving else self._name_kind(expr.id, scope, resolving | {expr.id})
        return None

    def _all_numbers(self, operands: list[ast.expr], scope: Scope, resolving: frozenset[str]) -> bool:
        return all(self.of(operand, scope, resolving) is not None for operand in operands)

    def _returned_kind(self, call: ast.Call, scope: Scope, resolving: frozenset[str]) -> str | None:
        """The kind of number a same-file module-level function returns (`get_decay(step)` returning
        `min(0.999, 1 - ...)`), its parameters taken for numbers; None when not every return is one,
        or when an argument may be a tensor (`decayed(torch.tensor(0.1), step)` returns one)."""
        func = call.func
        if not isinstance(func, ast.Name) or func.id in resolving:
            return None
        function = self.program.index.functions.get(func.id)
        if function is None:
            return None
        if any(self.tensors.reason(a, scope) is not None for a in (*call.args, *(k.value for k in call.keywords))):
            return None
        returns = [n.value for n in ast.walk(function.node) if isinstance(n, ast.Return) and n.value is not None]
        if not returns:
            return None
        parameters = frozenset(a.arg for a in all_args(function.node))
        kinds = {self.of(r, function.node, resolving | parameters | {func.id}) for r in returns}
        kinds.discard(_CYCLE)
        if not kinds or None in kinds:
            return None
        return kinds.pop() if len(kinds) == 1 else "number"

    def _name_kind(self, name: str, scope: Scope, resolving: frozenset[str]) -> str | None:
        """The kind of number every binding of `name` in its scope gives it (a function's free name:
        the module's bindings of it)."""
        kinds: set[str | None] = set()
        for node in self.program.own_nodes(scope):
            if isinstance(node, (ast.For, ast.AsyncFor)) and name in target_names(node.target):
                kinds.add(self.target_kind(node.target, name, node.iter, scope))
            elif isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets):
                value = assigned_value(node, name) if len(node.targets) == 1 else None
                if value is None:
                    return None
                kinds.add(self.of(value, scope, resolving))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                kinds.add(self.of(node.value, scope, resolving))
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr, ast.withitem)) and name in bound_by(node):
                return None
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {a.arg for a in all_args(scope)}:
            return None  # a parameter: its callers decide (`changing_number` asks them)
        if not kinds and not isinstance(scope, ast.Module):  # no binding here
            return self._name_kind(name, self.program.index.tree, resolving)  # a global the function reads
        kinds.discard(_CYCLE)
        if not kinds or None in kinds:
            return None
        if kinds <= {"int", "bool"}:
            return "int" if "int" in kinds else "bool"
        return "float" if kinds <= {"int", "float"} else "number"

    def target_kind(self, target: ast.expr, name: str, iterable: ast.expr, scope: Scope) -> str | None:
        """The kind of number a `for` target's `name` takes: the whole element, or its place in a
        tuple target (`for i, n in enumerate(lengths)`)."""
        if isinstance(target, ast.Name):
            return self._element_kind(iterable, scope)
        if isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call):
            func = iterable.func
            positional = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name]
            parallel = self.program.qualified(func) == "itertools.product" or (
                isinstance(func, ast.Name) and func.id == "zip"
            )
            if parallel and positional and len(iterable.args) == len(target.elts):  # `for w, lr in product(ws, lrs)`
                return self._element_kind(iterable.args[positional[0]], scope)
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(iterable, ast.Call):
            func = iterable.func
            if isinstance(func, ast.Name) and func.id == "enumerate" and iterable.args:
                first, second = target.elts
                if isinstance(first, ast.Name) and first.id == name:
                    return "int"
                if isinstance(second, ast.Name) and second.id == name:
                    return self._element_kind(iterable.args[0], scope)
        return None

    def _element_kind(self, iterable: ast.expr, scope: Scope) -> str | None:
        """The kind of number a `for` loop over `iterable` gives its target: `range(...)`, a literal
        tuple or list of numbers."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
            return "int"
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id in ("reversed", "sorted", "list", "tuple")
            and len(iterable.args) == 1
        ):  # `for t in reversed(range(T))`
            return self._element_kind(iterable.args[0], scope)
        if isinstance(iterable, ast.Name):  # `for n in lengths`, `lengths = [8, 16, 32]` bound once
            values = self.single_values(iterable.id, scope)
            return (
                self._element_kind(values[0], scope)
                if len(values) == 1 and not isinstance(values[0], ast.Name)
                else None
            )
        if isinstance(iterable, (ast.Tuple, ast.List)) and iterable.elts:
            kinds = {self.of(e, scope) for e in iterable.elts}
            if None in kinds or len({ast.dump(e) for e in iterable.elts}) == 1:
                return None
            return kinds.pop() if len(kinds) == 1 else "float" if kinds <= {"int", "float"} else "number"
        return None

    def single_values(self, name: str, scope: Scope) -> list[ast.expr]:
        """The values `name = value` statements of a scope give `name` (its only bindings there)."""
        return [
            n.value
            for n in self.program.own_nodes(scope)
            if isinstance(n, ast.Assign) and any(name in target_names(t) for t in n.targets)
        ]
