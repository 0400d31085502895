"""How a gated layer's values are kept where the layer is skipped, in the `torch.where` form: each
live value the layer assigns or updates is written once more as a selection between the old value
and the layer's (`h = _exact_where(skip, h, h_new)`, `exact_where`). `gate_where` decides which
statements need one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..analysis.purity import dotted
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import walk
from .base import FixContext, Refused
from .exact_where import exact_where
from .gate_definition import operand_text
from .gate_recognition import STATE_KINDS, Gate, Region
from .text import indent_of

# The where form's note on its selections where the file cannot have `exact_where`'s helper (a
# notebook); the cond form does not make it.
BROADCAST_NOTE = (
    "a layer's output may differ in shape or dtype from what it replaces (torch.where broadcasts and promotes)"
)


class Selections:
    """The selections of one gate, with one new name per variable for the layer's new values."""

    def __init__(self, gate: Gate, analysis: FunctionAnalysis, ctx: FixContext, note: Callable[[str], None]) -> None:
        self.gate = gate
        self.analysis = analysis
        self.ctx = ctx
        self._note = note
        self.new_names: dict[str, str] = {}
        self.helper_edits: list[TextEdit] = []  # the definition of `exact_where`'s helper, once

    def _selector(self) -> str:
        """What selects between the old value and the layer's: `exact_where`'s helper, which is
        torch.where only where that gives exactly the value the `if` gave (the layer's output in
        another dtype or shape would otherwise be promoted or broadcast); torch.where, with that
        noted, where the file cannot have the helper."""
        name = exact_where(self.ctx, self.gate.torch, self._define)
        if name is None:
            self._note(BROADCAST_NOTE)
            return f"{self.gate.torch}.where"
        return name

    def _define(self, definition: TextEdit) -> None:
        if definition not in self.helper_edits:
            self.helper_edits.append(definition)

    def assignment(
        self,
        stmt: ast.Assign,
        target: ast.expr,
        live: list[str],
        region: Region,
        earlier: list[ast.stmt],
    ) -> list[str]:
        """The lines that replace `stmt` (`x = v`): the old `x` kept for each of the `live` tensors
        where the layer was skipped."""
        for name in live:
            if not self.gate.has_old_value(name, earlier):
                raise Refused(f"`{name}` has no value to keep when the layer is skipped")
        select = self._selector()
        lines = self.ctx.source.lines
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        indent = indent_of(lines[first - 1])
        force = f" or {operand_text(region.force, self.ctx)}" if region.force is not None else ""
        flag = self.gate.flag
        keep = f"{flag} is None{force}"

        def choose(name: str, new: str) -> str:
            where = f"{select}({flag}, {name}, {new})"
            return (
                f"{indent}{name} = {new} if {keep} else {where}"
                if (self.gate.may_be_none or force)
                else f"{indent}{name} = {where}"
            )

        if isinstance(target, ast.Name) and _is_simple(stmt.value):
            return [choose(target.id, self.ctx.segment(stmt.value))]
        renamed = {name: self._new_name(name) for name in live}
        original = lines[first - 1 : last]
        edits = sorted(
            (
                (self.ctx.source.node_range(e), renamed[e.id])
                for e in walk(target)
                if isinstance(e, ast.Name) and e.id in renamed
            ),
            key=lambda p: p[0].start.character,
            reverse=True,
        )
        first_line = original[0]
        for where, new_name in edits:
            if where.start.line != first - 1:
                raise Refused("the assignment's targets span several lines")
            first_line = first_line[: where.start.character] + new_name + first_line[where.end.character :]
        return [first_line, *original[1:], *(choose(name, renamed[name]) for name in live)]

    def _new_name(self, name: str) -> str:
        """One name per variable for the layer's new values (each is read on the next line only)."""
        if name not in self.new_names:
            self.new_names[name] = self.ctx.fresh_name(f"{name}_new")
        return self.new_names[name]

    def update(self, stmt: ast.AugAssign, name: str, region: Region, earlier: list[ast.stmt]) -> list[str]:
        """`x *= m` of a tensor still needed after the region: in place as before where Python
        decides, `x = torch.where(skip, x, x * m)` where the skip is a tensor."""
        if self.analysis.env.get(name, Kind.UNKNOWN) not in STATE_KINDS:
            raise Refused(f"`{name}` is not a tensor, so its update cannot be selected")
        if not self.gate.has_old_value(name, earlier):
            raise Refused(f"`{name}` has no value to keep when the layer is skipped")
        operator = _OPERATORS.get(type(stmt.op))
        if operator is None or region.force is not None:
            raise Refused(f"the layer's branch updates `{name}` in place")
        self._note(
            f"`{name} {operator}= ...` becomes out of place wherever the skip is drawn as a tensor (every training "
            "step, whatever the LayerDrop rate): another name for the same tensor, or a forward hook that kept it, "
            "no longer sees the change"
        )
        select = self._selector()
        lines = self.ctx.source.lines
        indent = indent_of(lines[stmt.lineno - 1])
        value = self.ctx.segment(stmt.value)
        flag = self.gate.flag
        where = f"{select}({flag}, {name}, {name} {operator} ({value}))"
        if not self.gate.may_be_none:
            return [f"{indent}{name} = {where}"]
        unit = self.ctx.indent_unit
        original = lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno]
        return [
            f"{indent}if {flag} is None:",
            *(unit + line for line in original),
            f"{indent}else:",
            f"{indent}{unit}{name} = {where}",
        ]


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@"}


def _is_simple(expr: ast.expr) -> bool:
    """Cheap to write twice: a name, an attribute chain, or one of them indexed by a constant."""
    if isinstance(expr, ast.Subscript):
        return _is_simple(expr.value) and isinstance(expr.slice, ast.Constant)
    return isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and dotted(expr) is not None)
