"""Loop gates: a data-dependent skip of a layer inside a loop (LayerDrop) becomes "run the layer
always, keep its result only where it was not skipped".

    for layer in self.layers:                      for layer in self.layers:
        if self.training:                              skip = None
            p = torch.rand([])                         if self.training:
            if p < self.layerdrop:          →              p = torch.rand([])
                continue                                   skip = p < self.layerdrop
        h = layer(h)[0]                                h_new = layer(h)[0]
                                                       h = h_new if skip is None else torch.where(skip, h, h_new)

The gate is a name that is None where Python alone decides that the layer runs (eval mode: the
code is then exactly the original one, at no cost) and a bool tensor where a tensor decides
(training). The shapes transformers uses are all reduced to that: `if p < drop: continue`, a
`to_drop` flag set under the test and tested later (`if to_drop: outputs = (None, None) else: ...`),
a `skip_the_layer = True if ... else False` flag, a `skip_the_layer = False` flag that a Python `if`
makes a bool tensor (transformers 5.x), and an `if` whose one branch runs the layer.

With the `layer-skip = "cond"` setting, where the guarded block only replaces tensors, gate_cond
writes the `torch.cond` form instead (the skipped layer does not run); the `torch.where` form is the
default, being the cheaper one at the LayerDrop rates models use (measured, see WHERE_CHOICE).

Every `torch.where` fix is unsafe: a skipped layer still runs (its compute, and in training its dropout
draws, which shift later random numbers); the tuples a layer's outputs are collected into get an
entry for a skipped layer too; a placeholder such as `(None, None)` is replaced by the outputs.
Dynamo abandons the whole frame on a break inside a loop (0 graphs), so this is where fixing pays.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_message, is_replayed
from ..semantics import child_nodes, walk
from ..source import Position, Range
from ..analysis import conditions, liveness
from .base import FixContext, Refusal, Refused
from .gate_cond import STATE_KINDS, CondForm, cond_form
from ..analysis.purity import call_impurity, dotted, draws_random, impurity
from .text import Unmovable, comments_outside, first_line, indent_of, reindented

TITLE = "Run the layer always and keep its result only where it is not skipped (`torch.where`)"
COND_TITLE = "Run the layer only where it is not skipped (`torch.cond`, as `layer-skip` asks: a skipped layer's compute does not run)"
# Measured (benchmarks/gate_cost.py): in training, `torch.where` costs less than `torch.cond` up to a
# LayerDrop of about 0.3 (at 0.1: 1.06x against 1.25x of the original), `torch.cond` less above (at 0.5:
# 1.67x against 1.98x); in eval both run the plain layer.
WHERE_CHOICE = "cheaper than `torch.cond` at LayerDrop up to about 0.3; `layer-skip = \"cond\"` for higher rates"
# The where form's note on its selections, which the cond form does not make.
_BROADCAST_NOTE = "a layer's output may differ in shape or dtype from what it replaces (torch.where broadcasts and promotes)"


@dataclass
class _Region:
    """Statements that run only when the layer is not skipped (or when `force` holds)."""

    statements: list[ast.stmt]
    header: ast.If | None  # the flag's `if`: unwrapped around them, or (`if flag: continue`) deleted
    force: ast.expr | None = None  # a Python condition under which they run even when skipped
    placeholders: list[ast.stmt] = field(default_factory=list)  # the skipped path's assignments, dropped
    unwrap: bool = True  # False: the statements stay where they are (the rest of the loop body)


def loop_gate(stmt: ast.stmt, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
    """The fix for a gate at `stmt` (an `if`, or the assignment holding a flag ternary); None when
    `stmt` is not a loop gate, so that the plain predication applies."""
    function = analysis.function
    if function is None or ctx.torch_name is None:
        return None
    loops = liveness.enclosing_loops(function.node, stmt)
    if not loops:
        return None
    try:
        gate = _Gate(stmt, loops[0], analysis, ctx)
        if not gate.recognise():
            return None
        return gate.fix()
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)


class _Gate:
    def __init__(self, stmt: ast.stmt, loop: ast.For | ast.AsyncFor | ast.While, analysis: FunctionAnalysis, ctx: FixContext) -> None:
        self.stmt = stmt
        self.loop = loop
        self.body = loop.body
        self.analysis = analysis
        self.ctx = ctx
        self.function = analysis.function.node  # type: ignore[union-attr]
        self.torch: str = ctx.torch_name  # type: ignore[assignment]
        self.edits: list[TextEdit] = []
        self.unsafe: list[str] = []
        self.layer_calls: list[str] = []
        self.flag = ""
        self.may_be_none = False
        self.regions: list[_Region] = []
        self.definition_text: str | None = None  # the gate, when it is written in front of an unwrapped branch
        self._by_id: dict[int, ast.stmt] = {}
        self.new_names: dict[str, str] = {}

    def _note(self, reason: str) -> None:
        if reason not in self.unsafe:
            self.unsafe.append(reason)

    # ------------------------------------------------------------------ recognising the shapes
    def recognise(self) -> bool:
        """Find the gate's shape, its skip condition and the regions it guards; False when `stmt`
        is not a gate at all."""
        top, outer = self._top_level()
        if top is None:
            return False
        stmt = self.stmt
        if isinstance(stmt, ast.If) and outer is None and (flag := self._flag_on_some_paths(stmt.test)) is not None:
            return self._recognise_flag_on_some_paths(flag)
        if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue):
            self._define(stmt.test, stmt, outer, fresh=True)
            after = self.body[self.body.index(top) + 1 :]
            if not after:
                raise Refused("nothing follows the `continue` in the loop")
            self.regions = [_Region(after, None)]
            return True
        if isinstance(stmt, ast.If) and not stmt.orelse and _sets_true(stmt.body):
            flag = stmt.body[0].targets[0].id  # type: ignore[attr-defined]
            initial = self._initial_false(flag, top)
            if initial is None:
                return False
            self._define(stmt.test, stmt, outer, fresh=False, flag=flag)
            self.edits.append(self._replace_statement(initial, f"{flag} = None"))
            self.may_be_none = True
            self.regions = self._flag_tests(flag, top)
            return True
        if isinstance(stmt, ast.Assign) and outer is None:
            flag, skip = _flag_ternary(stmt)
            if flag is None or skip is None:
                return False
            self._define(skip, stmt, None, fresh=False, flag=flag, replace_value=True)
            self.regions = self._flag_tests(flag, top)
            return True
        if isinstance(stmt, ast.If) and outer is None:
            return self._recognise_branches(stmt)
        return False

    def _flag_on_some_paths(self, test: ast.expr) -> str | None:
        """The flag a test of the forms `_flag_tests` takes reads, when it is False on some paths and a
        bool tensor on others (transformers 5.x: `skip_the_layer = False`, then in training
        `skip_the_layer = dropout_probability < self.layerdrop`)."""
        first = test.values[0] if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else test
        name = first.operand if isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.Not) else first
        if isinstance(name, ast.Name) and self.analysis.kind(name) is Kind.TENSOR_ON_SOME_PATHS:
            return name.id
        return None

    def _recognise_flag_on_some_paths(self, flag: str) -> bool:
        """`flag = False` at the loop body's top, then one Python `if` that assigns it a bool tensor:
        the False becomes None (Python decides: the original code runs) and every test of the flag
        selects, as for a flag set to True under the tensor test."""
        tops = [s for s in self.body if _mentions(s, flag)]
        if len(tops) < 3:
            return False
        definer = tops[1]
        if self._initial_false(flag, definer) is not tops[0] or not isinstance(definer, ast.If) or definer.orelse:
            return False
        assignments = [n for n in walk(definer) if isinstance(n, ast.Assign) and any(_is_name(t, flag) for t in n.targets)]
        if len(assignments) != 1 or assignments[0] not in definer.body or len(assignments[0].targets) != 1:
            raise Refused(f"`{flag}` is bound more than once where it becomes a tensor")
        if sum(isinstance(n, ast.Name) and n.id == flag for n in walk(definer)) != 1:
            raise Refused(f"`{flag}` is read where it becomes a tensor")
        self._define(assignments[0].value, assignments[0], definer, fresh=False, flag=flag, replace_value=True)
        self.edits.append(self._replace_statement(tops[0], f"{flag} = None"))
        self.may_be_none = True
        self.regions = self._flag_tests(flag, definer)
        return True

    def _recognise_branches(self, stmt: ast.If) -> bool:
        """`if skip: <placeholders> else: <layer>` or `if run: <layer>` directly in the loop."""
        body_is_placeholder = _placeholders(stmt.body)
        if stmt.orelse and body_is_placeholder and self._runs_layer(stmt.orelse):
            skip, run, placeholders = stmt.test, stmt.orelse, stmt.body
        elif stmt.orelse and _placeholders(stmt.orelse) and self._runs_layer(stmt.body):
            skip, run, placeholders = conditions.negated(stmt.test), stmt.body, stmt.orelse
        elif not stmt.orelse and self._runs_layer(stmt.body):
            skip, run, placeholders = conditions.negated(stmt.test), stmt.body, []
        else:
            return False
        self._define(skip, stmt, None, fresh=True, keep_statement=True)
        self.regions = [_Region(run, stmt, None, placeholders)]
        return True

    def _top_level(self) -> tuple[ast.stmt | None, ast.If | None]:
        """The loop-body statement holding `stmt`: `stmt` itself, or a Python-valued `if` whose
        last statement `stmt` is (`if self.training: ...; if p < drop: continue`)."""
        if self.stmt in self.body:
            return self.stmt, None
        found = liveness.locate(self.function, self.stmt)
        if found is None:
            return None, None
        holder, block, index = found
        if (
            isinstance(holder, ast.If)
            and holder in self.body
            and block is holder.body
            and index == len(block) - 1
            and not holder.orelse
            and not self.analysis.is_data_dependent(holder.test)
        ):
            return holder, holder
        return None, None

    def _initial_false(self, flag: str, top: ast.stmt) -> ast.Assign | None:
        """`flag = False` at the loop body's top level before the gate, with no other binding between."""
        for stmt in reversed(self.body[: self.body.index(top)]):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == flag:
                return stmt if isinstance(stmt.value, ast.Constant) and stmt.value.value is False else None
            if any(isinstance(n, ast.Name) and n.id == flag for n in walk(stmt)):
                return None
        return None

    def _flag_tests(self, flag: str, top: ast.stmt) -> list[_Region]:
        """Every later use of the flag must be a test at the loop body's top level:
        `if flag: <placeholders> [else: <run>]`, `if not flag: <run> [else: <placeholders>]`,
        `if not flag or <python>: <run> [else: ...]`."""
        regions: list[_Region] = []
        for stmt in self.body[self.body.index(top) + 1 :]:
            if not any(isinstance(n, ast.Name) and n.id == flag for n in walk(stmt)):
                continue
            if not isinstance(stmt, ast.If):
                raise Refused(f"`{flag}` is used other than in an `if` that tests it")
            test = stmt.test
            if _is_name(test, flag) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue):
                rest = self.body[self.body.index(stmt) + 1 :]
                if any(_mentions(s, flag) for s in rest):
                    raise Refused(f"`{flag}` is used after `if {flag}: continue`")
                regions.append(_Region(rest, stmt, unwrap=False))
                break
            if _is_name(test, flag):
                run, skipped, force = stmt.orelse, stmt.body, None
            elif _is_not_name(test, flag):
                run, skipped, force = stmt.body, stmt.orelse, None
            elif (
                isinstance(test, ast.BoolOp)
                and isinstance(test.op, ast.Or)
                and _is_not_name(test.values[0], flag)
                and not any(_mentions(v, flag) for v in test.values[1:])
                and not any(self.analysis.is_data_dependent(v) for v in test.values[1:])
            ):
                rest = test.values[1:]
                force = rest[0] if len(rest) == 1 else ast.copy_location(ast.BoolOp(op=ast.Or(), values=list(rest)), rest[0])
                run, skipped = stmt.body, stmt.orelse
                if skipped:
                    raise Refused(f"the skipped path of `{ast.unparse(test)}` does more than the layer's placeholders")
            else:
                raise Refused(f"`{flag}` is tested in a form graphmend does not rewrite (`{ast.unparse(test)}`)")
            if any(_mentions(s, flag) for s in [*run, *skipped]):
                raise Refused(f"`{flag}` is used inside the branches it selects")
            if not _placeholders(skipped):
                raise Refused("the path taken when the layer is skipped does more than assign placeholders")
            regions.append(_Region(run, stmt, force, skipped))
        if not regions:
            raise Refused(f"`{flag}` is never tested")
        last = regions[-1].header
        if last is not None and regions[-1].unwrap and liveness.live_after(self.function, last, flag):
            raise Refused(f"`{flag}` is still read after its tests")
        return regions

    def _runs_layer(self, statements: list[ast.stmt]) -> bool:
        return any(isinstance(n, ast.Call) and self._layer_call(n) is not None for s in statements for n in walk(s))

    # ------------------------------------------------------------------ the skip condition
    def _define(
        self,
        skip: ast.expr,
        site: ast.stmt,
        outer: ast.If | None,
        fresh: bool,
        flag: str = "",
        replace_value: bool = False,
        keep_statement: bool = False,
    ) -> None:
        """Write the gate: `flag = <bool tensor>` where the tensor decides, None where Python does.

        `site` is the statement that decides today (the `if`, or the flag's assignment); `outer`,
        a Python `if` around it, after which the flag would otherwise be unbound.
        """
        split = conditions.split(skip, self.analysis)
        if not self.analysis.is_data_dependent(split.rest):
            raise Refused("the skip condition does not test a tensor")
        reason = impurity(split.rest, self.analysis, set(), condition=True)
        if reason is not None:
            raise Refused(reason.replace("a branch", "the condition"))
        self.flag = self.ctx.fresh_name("skip_layer") if fresh else flag
        tensor = conditions.tensor_logic(split.rest, self.analysis, self.ctx.segment, self.torch)
        static = " and ".join(_wrapped(conditions.python_text(e, self.ctx.segment), e) for e in split.static)
        shown = f"({tensor})" if static and not tensor.isidentifier() else tensor
        value = f"{shown} if {static} else None" if static else tensor
        self.may_be_none = self.may_be_none or bool(static) or outer is not None
        if replace_value:
            assert isinstance(site, ast.Assign)
            self.edits.append(TextEdit(self.ctx.source.node_range(site.value), value))
            return
        definition = f"{self.flag} = {value}"
        if keep_statement:
            self.definition_text = definition  # written in front of the unwrapped branch, with its comments
            return
        indent = indent_of(self.ctx.source.lines[site.lineno - 1])
        comments = comments_outside(self.ctx, site, [])  # the last one stays at the end of the line
        lines = [indent + c for c in comments[:-1]] + [f"{indent}{definition}" + (f"  {comments[-1]}" if comments else "")]
        if outer is not None and fresh:
            outer_indent = indent_of(self.ctx.source.lines[outer.lineno - 1])
            start = Position(outer.lineno - 1, 0)
            self.edits.append(TextEdit(Range(start, start), f"{outer_indent}{self.flag} = None\n"))
        self.edits.append(TextEdit(self.ctx.line_range(site.lineno, site.end_lineno or site.lineno), "\n".join(lines)))

    # ------------------------------------------------------------------ the regions
    def fix(self) -> Fix:
        # Reads in a gated region see the value only where the layer runs; in the rewrite, always
        # the computed one: they need no selection (their own effects are noted where they occur).
        self.gated = frozenset(id(s) for r in self.regions for s in r.statements)
        self.placeholder_names = {n for r in self.regions for s in r.placeholders for t in s.targets for n in liveness.target_names(t)}  # type: ignore[attr-defined]
        gate_edits = list(self.edits)  # the gate's definition: both forms write it
        for region in self.regions:
            self._rewrite(region)
        choice = WHERE_CHOICE
        recorded = self.ctx.cuda_graph_scope(self.analysis.entry)
        if self.ctx.layer_skip == "cond" and recorded is not None:
            choice = f"not `torch.cond`: CUDA graphs are recorded here ({recorded}), and `torch.cond` would keep the graph out of them"
        elif self.ctx.layer_skip == "cond":
            skipped = cond_form(self)
            if isinstance(skipped, CondForm):
                reasons = [*skipped.notes, *(n for n in self.unsafe if n != _BROADCAST_NOTE)]
                return Fix(f"{COND_TITLE} (unsafe: {'; '.join(reasons)})", Applicability.UNSAFE, (*gate_edits, *skipped.edits))
            choice = f"not `torch.cond`: {skipped}"
        reasons = []
        if self.layer_calls:
            layers = ", ".join(f"`{n}`" for n in dict.fromkeys(self.layer_calls))
            reasons.append(f"a skipped layer still runs ({layers}): it costs its compute, and in training its random draws (dropout) shift later ones")
        reasons.extend(self.unsafe)
        return Fix(f"{TITLE}, {choice} (unsafe: {'; '.join(reasons)})", Applicability.UNSAFE, tuple(self.edits))

    def _rewrite(self, region: _Region) -> None:
        end = region.header if region.header is not None and region.unwrap else self.body[-1]
        selected: dict[int, list[str]] = {}  # statement id → its replacement lines
        self._walk(region.statements, region, end, selected, None)
        placeholder_names = {n for s in region.placeholders for t in s.targets for n in liveness.target_names(t)}  # type: ignore[attr-defined]
        assigned = {node.id for r in self.regions for s in r.statements for node in walk(s)
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        for name in sorted(placeholder_names):
            if self._live(end, name):
                if name not in assigned:
                    raise Refused(f"`{name}` is set only when the layer is skipped")
                text = next(self.ctx.segment(s.value) for s in region.placeholders if name in liveness.target_names(s.targets[0]))  # type: ignore[attr-defined]
                self._note(f"after a skipped layer, `{name}` holds its outputs instead of `{text}`")
        if not region.statements:  # `if flag: <placeholders>` alone: nothing runs in its place
            region.unwrap = False
        if region.header is None or not region.unwrap:
            for stmt_id, lines in selected.items():
                self.edits.append(self._replace_lines(self._by_id[stmt_id], lines))
            if region.header is not None:  # `if flag: continue`: the rest now always runs
                self.edits.append(self.delete_statement(region.header))
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
        lines = [indent + comment for comment in comments_outside(self.ctx, header, region.statements)]
        if self.definition_text is not None and header is self.stmt:
            lines.append(indent + self.definition_text)
        lines.extend(body)
        self.edits.append(TextEdit(self.ctx.line_range(header.lineno, header.end_lineno or header.lineno), "\n".join(lines)))

    def _compose(self, first: int, last: int, selected: dict[int, list[str]]) -> list[str]:
        """Lines `first..last` of the source, with each selected statement's lines replaced."""
        replacements = {self._by_id[i].lineno: (self._by_id[i].end_lineno or self._by_id[i].lineno, lines) for i, lines in selected.items()}
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
        region: _Region,
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
            if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
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
                        selected[id(stmt)] = self._select_update(stmt, name, region, before)
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
                if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and isinstance(func.value, ast.Name):
                    for argument in call.args:
                        self._check_expression(argument)
                    if self._live(end, func.value.id):
                        self._collected(func.value.id, guard)
                    continue
                self._check_expression(call)
                if self._layer_call(call) is None:
                    raise Refused(f"the layer's branch calls `{dotted(func) or 'a function'}` for its side effect")
                continue
            raise Refused(f"the layer's branch contains `{type(stmt).__name__.lower()}`")

    def _live(self, end: ast.stmt, name: str) -> bool:
        return liveness.live_after(self.function, end, name, ignoring=self.gated)

    def _collected(self, name: str, guard: str | None) -> None:
        """`name` collects per-layer outputs (`all_attentions += (a,)`): a skipped layer adds one too."""
        when = f" (with `{guard}`)" if guard else ""
        self._note(f"`{name}` gets an entry for a skipped layer too{when}")

    def _check_expression(self, expr: ast.expr) -> None:
        for node in walk(expr):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
                raise Refused(f"the layer's branch has `{type(node).__name__.lower()}`")
            if isinstance(node, ast.BoolOp) and any(self.analysis.is_data_dependent(v) for v in node.values[:-1]):
                raise Refused("the layer's branch tests a tensor with `and`/`or`")
            if not isinstance(node, ast.Call):
                continue
            layer = self._layer_call(node)
            if layer is not None:
                self.layer_calls.append(layer)
                continue
            reason = call_impurity(node, self.analysis)
            if reason is not None and draws_random(node, self.analysis):
                self._note("the branch draws random numbers even for a skipped layer")
            elif reason is not None:
                raise Refused(reason.replace("a branch", "the layer's branch"))

    def _layer_call(self, call: ast.Call) -> str | None:
        """A call of a layer of the model: `layer(...)` for a loop variable over a module list,
        `self.<attribute>(...)` holding a module or a function (not a method of the class),
        or `layer.__call__` passed to a checkpointing function."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "__call__":
            func = func.value
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) and self.analysis.is_self(func.value.value):
            return f"{dotted(func.value)}[...]"  # an element of a module list: `self.attentions[i](...)`
        name = dotted(func)
        if name is None:
            return None
        if isinstance(func, ast.Name) and func.id in self._loop_layers():
            return name
        if isinstance(func, ast.Attribute) and self.analysis.is_self(func.value):
            method = self.analysis.function.method if self.analysis.function else None  # type: ignore[union-attr]
            owner = method.owner if method is not None else None
            if owner is None or owner.find_method(func.attr) is None:
                return name  # a submodule, or a function held by the model (a checkpointing wrapper)
        return None

    def _loop_layers(self) -> set[str]:
        """Names the loop binds to elements of a module list of `self` (`for i, layer in enumerate(self.layers)`)."""
        loop = self.loop
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return set()
        return _elements_of_self_lists(loop.iter, loop.target, self.analysis)

    def _select(
        self, stmt: ast.Assign, region: _Region, end: ast.stmt, guard: str | None, earlier: list[ast.stmt]
    ) -> list[str] | None:
        """`x = v` of a value still needed after the region: keep the old `x` where the layer was skipped."""
        if len(stmt.targets) != 1:
            raise Refused("the layer's branch assigns several targets at once")
        target = stmt.targets[0]
        if not isinstance(target, (ast.Name, ast.Tuple, ast.List)) or (isinstance(target, (ast.Tuple, ast.List)) and len(liveness.target_names(target)) != len(target.elts)):
            raise Refused("the layer's branch stores to an attribute or subscript")
        live = [n for n in liveness.target_names(target) if self._live(end, n) and n not in self.placeholder_names]
        if not live:
            return None
        if isinstance(target, ast.Name) and _is_collection(stmt.value, target.id):
            self._collected(target.id, guard)
            return None
        kinds = {name: self.analysis.env.get(name, Kind.UNKNOWN) for name in live}
        values = [n for n in live if kinds[n] not in STATE_KINDS]
        if values:
            if guard is None:
                raise Refused(f"`{values[0]}` is not a tensor, so it cannot be selected")
            for name in values:  # a cache or a flag returned by the layer, under a Python condition
                self._note(f"with `{guard}`, `{name}` takes the value of a skipped layer")
            live = [n for n in live if n not in values]
            if not live:
                return None
        for name in live:
            if not self.has_old_value(name, earlier):
                raise Refused(f"`{name}` has no value to keep when the layer is skipped")
        self._note(_BROADCAST_NOTE)
        lines = self.ctx.source.lines
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        indent = indent_of(lines[first - 1])
        force = f" or {_wrapped(conditions.python_text(region.force, self.ctx.segment), region.force)}" if region.force is not None else ""
        keep = f"{self.flag} is None{force}"

        def choose(name: str, new: str) -> str:
            where = f"{self.torch}.where({self.flag}, {name}, {new})"
            return f"{indent}{name} = {new} if {keep} else {where}" if (self.may_be_none or force) else f"{indent}{name} = {where}"

        if isinstance(target, ast.Name) and _is_simple(stmt.value):
            return [choose(target.id, self.ctx.segment(stmt.value))]
        renamed = {name: self._new_name(name) for name in live}
        original = lines[first - 1 : last]
        edits = sorted(((self.ctx.source.node_range(e), renamed[e.id]) for e in walk(target)
                        if isinstance(e, ast.Name) and e.id in renamed), key=lambda p: p[0].start.character, reverse=True)
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

    def _select_update(self, stmt: ast.AugAssign, name: str, region: _Region, earlier: list[ast.stmt]) -> list[str]:
        """`x *= m` of a tensor still needed after the region: in place as before where Python
        decides, `x = torch.where(skip, x, x * m)` where the skip is a tensor."""
        if self.analysis.env.get(name, Kind.UNKNOWN) not in STATE_KINDS:
            raise Refused(f"`{name}` is not a tensor, so its update cannot be selected")
        if not self.has_old_value(name, earlier):
            raise Refused(f"`{name}` has no value to keep when the layer is skipped")
        operator = _OPERATORS.get(type(stmt.op))
        if operator is None or region.force is not None:
            raise Refused(f"the layer's branch updates `{name}` in place")
        self._note(f"`{name} {operator}= ...` becomes out of place where the layer may be skipped: another name for the same tensor no longer sees the change")
        self._note(_BROADCAST_NOTE)
        lines = self.ctx.source.lines
        indent = indent_of(lines[stmt.lineno - 1])
        value = self.ctx.segment(stmt.value)
        where = f"{self.torch}.where({self.flag}, {name}, {name} {operator} ({value}))"
        if not self.may_be_none:
            return [f"{indent}{name} = {where}"]
        unit = self.ctx.indent_unit
        original = lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno]
        return [f"{indent}if {self.flag} is None:", *(unit + line for line in original), f"{indent}else:", f"{indent}{unit}{name} = {where}"]

    def has_old_value(self, name: str, earlier: list[ast.stmt]) -> bool:
        """Whether `name` holds a value before the gated statements run (bound before the loop, or
        read first by them, so bound by an earlier iteration or statement)."""
        return _bound_before(self.function, self.loop, name) or _read_first(earlier, name)

    # ------------------------------------------------------------------ text
    def _replace_statement(self, stmt: ast.stmt, text: str) -> TextEdit:
        indent = indent_of(self.ctx.source.lines[stmt.lineno - 1])
        return TextEdit(self.ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), indent + text)

    def delete_statement(self, stmt: ast.stmt) -> TextEdit:
        """Remove a statement's lines (and a blank line, when it stood between two); its comments stay."""
        comments = comments_outside(self.ctx, stmt, [])
        if comments:
            indent = indent_of(self.ctx.source.lines[stmt.lineno - 1])
            return TextEdit(self.ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), "\n".join(indent + c for c in comments))
        lines = self.ctx.source.lines
        first, last = stmt.lineno - 1, stmt.end_lineno or stmt.lineno
        before_blank = first > 0 and not lines[first - 1].strip()
        if before_blank and last < len(lines) and not lines[last].strip():
            last += 1
        return TextEdit(Range(Position(first, 0), Position(last, 0)), "")

    def _replace_lines(self, stmt: ast.stmt, lines: list[str]) -> TextEdit:
        return TextEdit(self.ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), "\n".join(lines))


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@"}


def _elements_of_self_lists(iterable: ast.expr, target: ast.expr, analysis: FunctionAnalysis) -> set[str]:
    """`for layer in self.layers`, `enumerate(self.layers)`, `zip(self.layers, self.norms)`: the
    names bound to elements of lists held by `self`."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and analysis.is_builtin(iterable.func.id):
        if iterable.func.id == "enumerate" and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return _elements_of_self_lists(iterable.args[0], target.elts[1], analysis)
        if iterable.func.id == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
            return set().union(*(_elements_of_self_lists(a, t, analysis) for a, t in zip(iterable.args, target.elts)))
        return set()
    if isinstance(iterable, ast.Attribute) and analysis.is_self(iterable.value) and isinstance(target, ast.Name):
        return {target.id}
    return set()


def _is_collection(value: ast.expr, name: str) -> bool:
    """`name + (x,)` or `name + [x]`: a tuple or list growing by one layer's entry."""
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and _is_name(value.left, name)
        and isinstance(value.right, (ast.Tuple, ast.List))
    )


def _read_first(statements: list[ast.stmt], name: str) -> bool:
    """Whether one of `statements` reads `name` on every path through it (so `name` is bound
    whenever the statements after them run)."""
    for stmt in statements:
        if isinstance(stmt, ast.If):
            if any(isinstance(n, ast.Name) and n.id == name for n in walk(stmt.test)):
                return True
            if stmt.orelse and _read_first(stmt.body, name) and _read_first(stmt.orelse, name):
                return True
        elif isinstance(stmt, (ast.Assign, ast.Expr, ast.AugAssign)) and _always_reads(stmt.value, name):
            return True
    return False


def _always_reads(expr: ast.AST, name: str) -> bool:
    """`expr` reads `name` whenever it is evaluated (not only in a lazy part: a branch of a
    conditional expression, a later operand of `and`/`or`, a lambda or comprehension)."""
    if isinstance(expr, ast.Name):
        return expr.id == name and isinstance(expr.ctx, ast.Load)
    if isinstance(expr, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return False
    if isinstance(expr, ast.IfExp):
        return _always_reads(expr.test, name)
    if isinstance(expr, ast.BoolOp):
        return _always_reads(expr.values[0], name)
    return any(_always_reads(child, name) for child in child_nodes(expr))


def _sets_true(body: list[ast.stmt]) -> bool:
    return (
        len(body) == 1
        and isinstance(body[0], ast.Assign)
        and len(body[0].targets) == 1
        and isinstance(body[0].targets[0], ast.Name)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is True
    )


def _flag_ternary(stmt: ast.Assign) -> tuple[str | None, ast.expr | None]:
    """`flag = True if c else False` → ("flag", c); `False if c else True` → ("flag", not c)."""
    value = stmt.value
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or not isinstance(value, ast.IfExp):
        return None, None
    sides = (value.body, value.orelse)
    if not all(isinstance(s, ast.Constant) and isinstance(s.value, bool) for s in sides) or sides[0].value == sides[1].value:  # type: ignore[attr-defined]
        return None, None
    skip = value.test if sides[0].value is True else conditions.negated(value.test)  # type: ignore[attr-defined]
    return stmt.targets[0].id, skip


def _placeholders(statements: list[ast.stmt]) -> bool:
    """Assignments of None (or tuples of None) to names: what a skipped layer leaves behind."""
    def placeholder(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant):
            return value.value is None
        return isinstance(value, ast.Tuple) and all(placeholder(e) for e in value.elts)

    return all(
        isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and placeholder(s.value)
        for s in statements
    )


def _bound_before(function: ast.AST, loop: ast.stmt, name: str) -> bool:
    """`name` is a parameter, or bound at the top level of a block around the loop before it."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = function.args
        if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
            return True
    current: ast.AST = loop
    while current is not function:
        found = liveness.locate(function, current)  # type: ignore[arg-type]
        if found is None:
            return False
        holder, block, index = found
        for stmt in block[:index]:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(name in liveness.target_names(t) for t in targets):
                    return True
        current = holder
    return False


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def _is_not_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not) and _is_name(expr.operand, name)


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(node))


def _is_simple(expr: ast.expr) -> bool:
    """Cheap to write twice: a name, an attribute chain, or one of them indexed by a constant."""
    if isinstance(expr, ast.Subscript):
        return _is_simple(expr.value) and isinstance(expr.slice, ast.Constant)
    return isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and dotted(expr) is not None)


def _wrapped(text: str, expr: ast.expr) -> str:
    return f"({text})" if isinstance(expr, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text else text


