"""The default form of a loop gate: the layer always runs, and `torch.where` keeps its results only
where it is not skipped (`h = h_new if skip is None else torch.where(skip, h, h_new)`).

Every `torch.where` fix is unsafe: a skipped layer still runs (its compute, and in training its dropout
draws, which shift later random numbers); the tuples a layer's outputs are collected into get an
entry for a skipped layer too; a placeholder such as `(None, None)` is replaced by the outputs.
The checks this form makes on the gated statements hold for the `torch.cond` form too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis import conditions, liveness
from ..analysis.hazards import hazards
from ..analysis.purity import call_caveat, call_impurity, dotted, draws_random
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_message, is_replayed
from ..semantics import walk
from .base import FixContext, Refused
from .gate_recognition import (
    STATE_KINDS,
    Gate,
    Region,
    delete_statement,
    inert,
    is_name,
    layer_call,
    unwrapped_header,
)
from .gate_values import Selections
from .text import Unmovable, first_line, indent_of, reindented


@dataclass(frozen=True)
class WhereForm:
    """The edits that select the layer's results (the gate's definition is written apart), what
    makes them unsafe, and the layers that run even where they are skipped."""

    edits: tuple[TextEdit, ...]
    notes: tuple[str, ...]
    layer_calls: tuple[str, ...]


def where_form(gate: Gate, analysis: FunctionAnalysis, ctx: FixContext) -> WhereForm:
    """The `torch.where` form of a recognised gate; raises Refused where the gated statements cannot be selected."""
    return _Selection(gate, analysis, ctx).form()


class _Selection:
    """One gate's `torch.where` rewrite, gathering its edits, notes and layer calls region by region."""

    def __init__(self, gate: Gate, analysis: FunctionAnalysis, ctx: FixContext) -> None:
        self.gate = gate
        self.analysis = analysis
        self.ctx = ctx
        self.edits: list[TextEdit] = []
        self.unsafe: list[str] = []
        self.layer_calls: list[str] = []
        self._by_id: dict[int, ast.stmt] = {}
        self.values = Selections(gate, analysis, ctx, self._note)
        # Reads in a gated region see the value only where the layer runs; in the rewrite, always
        # the computed one: they need no selection (their own effects are noted where they occur).
        self.gated = frozenset(id(s) for r in gate.regions for s in r.statements)
        self.placeholder_names = {n for r in gate.regions for n in r.placeholder_names}

    def form(self) -> WhereForm:
        for region in self.gate.regions:
            self._rewrite(region)
        edits = (*self.values.helper_edits, *self.edits)
        return WhereForm(edits, tuple(self.unsafe), tuple(dict.fromkeys(self.layer_calls)))

    def _note(self, reason: str) -> None:
        if reason not in self.unsafe:
            self.unsafe.append(reason)

    # ------------------------------------------------------------------ the regions
    def _rewrite(self, region: Region) -> None:
        end = self.gate.end(region)
        selected: dict[int, list[str]] = {}  # statement id → its replacement lines
        self._walk(region.statements, region, end, selected, None)
        assigned = {
            node.id
            for r in self.gate.regions
            for s in r.statements
            for node in walk(s)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
        for name in sorted(region.placeholder_names):
            if self._live(end, name):
                if name not in assigned:
                    raise Refused(f"`{name}` is set only when the layer is skipped")
                text = next(
                    self.ctx.segment(s.value)  # type: ignore[attr-defined]
                    for s in region.placeholders
                    if name in liveness.target_names(s.targets[0])  # type: ignore[attr-defined]
                )
                self._note(f"after a skipped layer, `{name}` holds its outputs instead of `{text}`")
        unwrap = region.unwrap and bool(region.statements)  # `if flag: <placeholders>` alone: nothing runs in its place
        if region.header is None or not unwrap:
            for stmt_id, lines in selected.items():
                self.edits.append(self._replace_lines(self._by_id[stmt_id], lines))
            if region.header is not None:  # `if flag: continue`: the rest now always runs
                self.edits.append(delete_statement(self.ctx, region.header))
            return
        # Unwrap the `if`: its running branch, one level less indented, with the selections.
        header = region.header
        indent = indent_of(self.ctx.source.lines[header.lineno - 1])
        first = first_line(region.statements[0], self.ctx)
        last = region.statements[-1].end_lineno or region.statements[-1].lineno
        try:
            body = reindented(self._compose(first, last, selected), region.statements, self.ctx, indent)
        except Unmovable as error:
            raise Refused(f"the layer's branch cannot be moved: {error}") from None
        self.edits.append(unwrapped_header(self.ctx, self.gate, region, indent, body))

    def _compose(self, first: int, last: int, selected: dict[int, list[str]]) -> list[str]:
        """Lines `first..last` of the source, with each selected statement's lines replaced."""
        replacements = {
            self._by_id[i].lineno: (self._by_id[i].end_lineno or self._by_id[i].lineno, lines)
            for i, lines in selected.items()
        }
        out: list[str] = []
        number = first
        while number <= last:
            if number in replacements:
                end, lines = replacements[number]
                out.extend(lines)
                number = end + 1
                continue
            out.append(self.ctx.source.lines[number - 1])
            number += 1
        return out

    def _walk(
        self,
        statements: list[ast.stmt],
        region: Region,
        end: ast.stmt,
        selected: dict[int, list[str]],
        guard: str | None,
        earlier: list[ast.stmt] | None = None,
    ) -> None:
        """Check every statement of a region and select each live value it assigns; `guard` is the
        Python condition of the innermost `if` around them (for the messages), `earlier` the
        region's statements that run before them."""
        for position, stmt in enumerate(statements):
            before = [*(earlier or []), *statements[:position]]
            self._by_id[id(stmt)] = stmt
            if inert(stmt):
                continue
            if isinstance(stmt, ast.Assign):
                self._check_expression(stmt.value)
                replacement = self._select(stmt, region, end, guard, before)
                if replacement is not None:
                    selected[id(stmt)] = replacement
                continue
            if isinstance(stmt, ast.AugAssign):
                self._check_expression(stmt.value)
                name = stmt.target.id if isinstance(stmt.target, ast.Name) else None
                if name is None:
                    raise Refused("the layer's branch updates an attribute or subscript in place")
                if self._live(end, name):
                    if isinstance(stmt.value, (ast.Tuple, ast.List)):
                        self._collected(name, guard)
                    else:
                        selected[id(stmt)] = self.values.update(stmt, name, region, before)
                continue
            if isinstance(stmt, ast.If):
                if self.analysis.is_data_dependent(stmt.test):
                    raise Refused("the layer's branch holds another data-dependent `if`")
                self._check_expression(stmt.test)
                text = conditions.python_text(stmt.test, self.ctx.segment)
                self._walk(stmt.body, region, end, selected, text, before)
                self._walk(stmt.orelse, region, end, selected, f"not ({text})", before)
                continue
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    self._check_expression(item.context_expr)
                self._walk(stmt.body, region, end, selected, guard, before)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                func = call.func
                if is_message(call, self.analysis) or is_replayed(call, self.analysis):
                    for argument in [*call.args, *(k.value for k in call.keywords)]:
                        self._check_expression(argument)
                    self._note("its messages (print, logging, warnings) appear for a skipped layer too")
                    continue
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("append", "extend")
                    and isinstance(func.value, ast.Name)
                ):
                    for argument in call.args:
                        self._check_expression(argument)
                    if self._live(end, func.value.id):
                        self._collected(func.value.id, guard)
                    continue
                self._check_expression(call)
                if layer_call(call, self.gate.loop, self.analysis) is None:
                    raise Refused(f"the layer's branch calls `{dotted(func) or 'a function'}` for its side effect")
                continue
            raise Refused(f"the layer's branch contains `{type(stmt).__name__.lower()}`")

    def _live(self, end: ast.stmt, name: str) -> bool:
        return liveness.live_after(self.gate.function, end, name, ignoring=self.gated)

    def _collected(self, name: str, guard: str | None) -> None:
        """`name` collects per-layer outputs (`all_attentions += (a,)`): a skipped layer adds one too."""
        when = f" (with `{guard}`)" if guard else ""
        self._note(f"`{name}` gets an entry for a skipped layer too{when}")

    def _check_expression(self, expr: ast.expr) -> None:
        for hazard in hazards(expr, self.analysis):  # it runs for a skipped layer too, unshielded
            if hazard.named is not None or hazard.overflow:
                self._note(hazard.named or hazard.words())
                continue
            raise Refused(
                hazard.raises
                or f"the layer's branch has {hazard.operation}, which would run for a skipped layer too and may "
                "give inf or NaN there (NaN gradients through torch.where)"
            )
        for node in walk(expr):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
                raise Refused(f"the layer's branch has `{type(node).__name__.lower()}`")
            if isinstance(node, ast.BoolOp) and any(self.analysis.is_data_dependent(v) for v in node.values[:-1]):
                raise Refused("the layer's branch tests a tensor with `and`/`or`")
            if not isinstance(node, ast.Call):
                continue
            layer = layer_call(node, self.gate.loop, self.analysis)
            if layer is not None:
                self.layer_calls.append(layer)
                continue
            reason = call_impurity(node, self.analysis)
            if reason is not None and draws_random(node, self.analysis):
                self._note("the branch draws random numbers even for a skipped layer")
            elif reason is not None:
                raise Refused(reason.replace("a branch", "the layer's branch"))
            caveat = call_caveat(node, self.analysis)  # an operation the allowlist does not hold
            if caveat is not None:
                self._note(caveat.replace("a branch", "the layer's branch", 1))

    # ------------------------------------------------------------------ the selections
    def _select(
        self, stmt: ast.Assign, region: Region, end: ast.stmt, guard: str | None, earlier: list[ast.stmt]
    ) -> list[str] | None:
        """`x = v` of a value still needed after the region: keep the old `x` where the layer was skipped."""
        if len(stmt.targets) != 1:
            raise Refused("the layer's branch assigns several targets at once")
        target = stmt.targets[0]
        if not isinstance(target, (ast.Name, ast.Tuple, ast.List)) or (
            isinstance(target, (ast.Tuple, ast.List)) and len(liveness.target_names(target)) != len(target.elts)
        ):
            raise Refused("the layer's branch stores to an attribute or subscript")
        live = [n for n in liveness.target_names(target) if self._live(end, n) and n not in self.placeholder_names]
        if not live:
            return None
        if isinstance(target, ast.Name) and _is_collection(stmt.value, target.id):
            self._collected(target.id, guard)
            return None
        kinds = {name: self.analysis.env.get(name, Kind.UNKNOWN) for name in live}
        assigned = self.analysis.kind(stmt.value)
        if isinstance(target, ast.Name) and assigned not in STATE_KINDS:
            kinds[target.id] = assigned  # `use_cache = False`: a flag, not a tensor
        values = [n for n in live if kinds[n] not in STATE_KINDS]
        if values:
            if guard is None:
                raise Refused(f"`{values[0]}` is not a tensor, so it cannot be selected")
            for name in values:  # a cache or a flag returned by the layer, under a Python condition
                self._note(f"with `{guard}`, `{name}` takes the value of a skipped layer")
            live = [n for n in live if n not in values]
            if not live:
                return None
        return self.values.assignment(stmt, target, live, region, earlier)

    def _replace_lines(self, stmt: ast.stmt, lines: list[str]) -> TextEdit:
        return TextEdit(self.ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), "\n".join(lines))


def _is_collection(value: ast.expr, name: str) -> bool:
    """`name + (x,)` or `name + [x]`: a tuple or list growing by one layer's entry."""
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and is_name(value.left, name)
        and isinstance(value.right, (ast.Tuple, ast.List))
    )
