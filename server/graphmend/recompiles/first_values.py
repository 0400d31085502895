"""The value a Python number has the first time a call runs, where a program shows it: what
Dynamo's guard on it will name (`lr == 0.1`)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial
from typing import Any

from .program import Program, Scope
from .syntax import bound_targets_of


class FirstValues:
    """The first values of a program's numbers (see the module docstring)."""

    def __init__(self, program: Program) -> None:
        self.program = program

    def value(self, expr: ast.expr, node: ast.AST) -> str | None:
        """The value `expr` has the first time `node` runs, where the loops around it start from
        literals (`range(1, 5)`, `(0.01, 0.1)`) and the names it reads are bound once to a literal:
        the value Dynamo's guard will name. None when not known."""
        scope = self.program.scope_of(node)
        known: dict[str, object] = {}
        for loop in self.program.ancestors(node):
            if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name):
                first = _first_element(loop.iter)
                if first is not None:
                    known[loop.target.id] = first
        try:
            value = _evaluate(expr, known, lambda name: self._bound_value(name, scope, node, known))
        except (ValueError, ArithmeticError, TypeError, RecursionError):
            return None
        return repr(round(value, 6) if isinstance(value, float) else value)

    def _bound_value(self, name: str, scope: Scope, node: ast.AST, known: dict[str, object]) -> object:
        """The value of `name` at `node`: the last binding before it in its scope (or the module's),
        when that is an assignment of a number expression that can be evaluated."""
        for where in (scope, self.program.index.tree):
            bindings = sorted(
                (
                    n
                    for n in self.program.own_nodes(where)
                    if isinstance(n, (ast.Assign, ast.AugAssign, ast.For)) and name in bound_targets_of(n)
                ),
                key=lambda n: (n.lineno, n.col_offset),
            )
            before = [n for n in bindings if (n.lineno, n.col_offset) < (node.lineno, node.col_offset)]  # type: ignore[attr-defined]
            if not before:
                continue
            last = before[-1]
            if isinstance(last, ast.Assign):
                return _evaluate(last.value, known, partial(self._bound_value, scope=where, node=last, known=known))
            raise ValueError(name)
        raise ValueError(name)


def _first_element(iterable: ast.expr) -> object:
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        if len(iterable.args) == 1:
            return 0
        start = iterable.args[0] if iterable.args else None
        return start.value if isinstance(start, ast.Constant) else None
    if isinstance(iterable, (ast.Tuple, ast.List)) and iterable.elts and isinstance(iterable.elts[0], ast.Constant):
        return iterable.elts[0].value
    return None


_COMPARISONS = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}
_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b if abs(b) < 64 else None,
}


def _evaluate(expr: ast.expr, known: dict[str, object], literal: Callable[[str], object]) -> Any:
    """A number expression's value from literals and `known` names; ValueError for anything else."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)):
        return expr.value
    if isinstance(expr, ast.Name):
        return known[expr.id] if expr.id in known else literal(expr.id)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return -_evaluate(expr.operand, known, literal)
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPERATORS:
        result = _OPERATORS[type(expr.op)](_evaluate(expr.left, known, literal), _evaluate(expr.right, known, literal))
        if result is None:
            raise ValueError("power")
        return result
    if isinstance(expr, ast.IfExp):
        return _evaluate(expr.body if _evaluate(expr.test, known, literal) else expr.orelse, known, literal)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _COMPARISONS:
        left, right = _evaluate(expr.left, known, literal), _evaluate(expr.comparators[0], known, literal)
        return _COMPARISONS[type(expr.ops[0])](left, right)
    raise ValueError(ast.unparse(expr))
