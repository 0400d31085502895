"""How statements change the kinds in force: what binding a target gives each name it binds, the
join of the kinds branches leave, and what a `None` or `isinstance` test says on each side."""

from __future__ import annotations

import ast

from ..kinds import Env, Kind, join
from .compile_time import CompileTimeFacts
from .expressions import ExpressionKinds
from .scope import Scope


class Bindings:
    """Changes to the kinds in force (`kinds.env`), and what a binding undoes of `facts`."""

    def __init__(self, scope: Scope, kinds: ExpressionKinds, facts: CompileTimeFacts) -> None:
        self.scope = scope
        self.kinds = kinds
        self.facts = facts

    def bind(self, target: ast.expr, kind: Kind, value: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.kinds.env[target.id] = kind
            self.kinds.forget()
            self.facts.rebound(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for element, element_value in zip(target.elts, value.elts):
                    self.bind(element, self.kinds.kind(element_value), element_value)
                return
            element_kind = Kind.TENSOR if kind.is_tensor else Kind.UNKNOWN
            for element in target.elts:
                self.bind(
                    element.value if isinstance(element, ast.Starred) else element,
                    Kind.UNKNOWN if isinstance(element, ast.Starred) else element_kind,
                )
        elif isinstance(target, ast.Starred):
            self.bind(target.value, Kind.UNKNOWN)

    def bind_iteration(self, target: ast.expr, iterable: ast.expr) -> None:
        """Bind a loop target to what iterating `iterable` gives, through `enumerate` (an index,
        then the items) and `zip` (one item of each): `for i, (row, n) in enumerate(zip(x, lengths))`
        makes `row` and `n` rows of tensors."""
        call = iterable if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if (
            call is not None
            and isinstance(target, (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *call.args])
            and self.scope.is_builtin(call.func.id)  # type: ignore[attr-defined]
        ):
            if call.func.id == "enumerate" and len(call.args) == 1 and len(target.elts) == 2:  # type: ignore[attr-defined]
                pairs = [(target.elts[0], None), (target.elts[1], call.args[0])]
            elif call.func.id == "zip" and call.args and len(call.args) == len(target.elts):  # type: ignore[attr-defined]
                pairs = list(zip(target.elts, call.args))
        if not pairs:
            self.bind(target, Kind.TENSOR if self.kinds.kind(iterable).is_tensor else Kind.UNKNOWN)
            return
        for element, source in pairs:
            if source is None:
                self.bind(element, Kind.PYTHON)
            else:
                self.bind_iteration(element, source)

    def merge(self, *envs: Env) -> None:
        """The kinds in force become the join of those `envs` (the ends of branches) hold."""
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
        self.kinds.env = merged

    def narrowing(self, test: ast.expr) -> tuple[Env, Env]:
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
            known = self.kinds.name_kind(name)
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
            and self.scope.is_builtin("isinstance")
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and self.scope.qualified_name(test.args[1]) == "torch.Tensor"
        ):
            return test.args[0].id
        return None
