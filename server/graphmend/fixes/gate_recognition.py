"""A loop gate recognised: the loop, the flag that says where its layer is skipped, the regions the
flag guards and the edits that define it, as data that both of the gate's forms rewrite from (the
`torch.where` form in gate_where, the `torch.cond` form in gate_cond).

The gate is a name that is None where Python alone decides that the layer runs (eval mode: the
code is then exactly the original one, at no cost) and a bool tensor where a tensor decides
(training). The shapes transformers uses are all reduced to that: `if p < drop: continue`, a
`to_drop` flag set under the test and tested later (`if to_drop: outputs = (None, None) else: ...`),
a `skip_the_layer = True if ... else False` flag, a `skip_the_layer = False` flag that a Python `if`
makes a bool tensor (transformers 5.x), and an `if` whose one branch runs the layer.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..analysis import conditions, liveness
from ..analysis.purity import dotted
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..kinds import OPTIONAL_TENSORS, TENSORISH, Kind
from ..semantics import child_nodes, walk
from ..source import Position, Range
from .base import FixContext, Refused
from .gate_definition import define
from .text import comments_outside, indent_of

# What a layer's carried state may be: a tensor (or not known otherwise), for either form.
STATE_KINDS = (*TENSORISH, *OPTIONAL_TENSORS, Kind.UNKNOWN)


@dataclass(frozen=True)
class Region:
    """Statements that run only when the layer is not skipped (or when `force` holds)."""

    statements: list[ast.stmt]
    header: ast.If | None  # the flag's `if`: unwrapped around them, or (`if flag: continue`) deleted
    force: ast.expr | None = None  # a Python condition under which they run even when skipped
    placeholders: list[ast.stmt] = field(default_factory=list)  # the skipped path's assignments, dropped
    unwrap: bool = True  # False: the statements stay where they are (the rest of the loop body)

    @property
    def placeholder_names(self) -> list[str]:
        """The names the skipped path assigns, in order."""
        return list(dict.fromkeys(n for s in self.placeholders for t in s.targets for n in liveness.target_names(t)))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Gate:
    """A recognised gate: where the flag is None the original code runs, where it is a bool tensor
    the forms keep the state of the layers it skips."""

    stmt: ast.stmt  # where the gate was found: an `if`, or the assignment holding a flag ternary
    loop: ast.For | ast.AsyncFor | ast.While
    function: ast.AST  # the function holding the loop
    torch: str  # the name the file's rewrites write torch with
    flag: str  # the gate's name: True where the layer is skipped
    may_be_none: bool  # False: the flag is a bool tensor on every path
    regions: tuple[Region, ...]
    definition: tuple[TextEdit, ...]  # the edits that write the flag: both forms make them
    definition_text: str | None  # the gate, when it is written in front of an unwrapped branch

    @property
    def body(self) -> list[ast.stmt]:
        return self.loop.body

    def end(self, region: Region) -> ast.stmt:
        """The statement after which a region's values are read: its `if` when that is unwrapped,
        else the loop body's last statement."""
        return region.header if region.header is not None and region.unwrap else self.body[-1]

    def has_old_value(self, name: str, earlier: list[ast.stmt]) -> bool:
        """Whether `name` holds a value before the gated statements run (bound before the loop, or
        read first by them, so bound by an earlier iteration or statement)."""
        return _bound_before(self.function, self.loop, name) or _read_first(earlier, name)


def recognise_gate(
    stmt: ast.stmt, loop: ast.For | ast.AsyncFor | ast.While, analysis: FunctionAnalysis, ctx: FixContext
) -> Gate | None:
    """The gate at `stmt` in `loop`; None when `stmt` is not a gate at all. Raises Refused (or
    conditions.ConditionError) for a gate that cannot be rewritten."""
    recogniser = _Recogniser(stmt, loop, analysis, ctx)
    if not recogniser.recognise():
        return None
    return Gate(
        stmt=stmt,
        loop=loop,
        function=recogniser.function,
        torch=recogniser.torch,
        flag=recogniser.flag,
        may_be_none=recogniser.may_be_none,
        regions=tuple(recogniser.regions),
        definition=tuple(recogniser.edits),
        definition_text=recogniser.definition_text,
    )


class _Recogniser:
    """What is found of one gate so far: the shape's checks fill in its flag, definition and regions."""

    def __init__(
        self, stmt: ast.stmt, loop: ast.For | ast.AsyncFor | ast.While, analysis: FunctionAnalysis, ctx: FixContext
    ) -> None:
        self.stmt = stmt
        self.loop = loop
        self.body = loop.body
        self.analysis = analysis
        self.ctx = ctx
        self.function = analysis.function.node  # type: ignore[union-attr]
        self.torch: str = ctx.torch_name  # type: ignore[assignment]
        self.edits: list[TextEdit] = []
        self.flag = ""
        self.may_be_none = False
        self.regions: list[Region] = []
        self.definition_text: str | None = None  # the gate, when it is written in front of an unwrapped branch

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
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Continue)
        ):
            self._define(stmt.test, stmt, outer, fresh=True)
            after = self.body[self.body.index(top) + 1 :]
            if not after:
                raise Refused("nothing follows the `continue` in the loop")
            self.regions = [Region(after, None)]
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
        assignments = [
            n for n in walk(definer) if isinstance(n, ast.Assign) and any(is_name(t, flag) for t in n.targets)
        ]
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
        self.regions = [Region(run, stmt, None, placeholders)]
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
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == flag
            ):
                return stmt if isinstance(stmt.value, ast.Constant) and stmt.value.value is False else None
            if any(isinstance(n, ast.Name) and n.id == flag for n in walk(stmt)):
                return None
        return None

    def _flag_tests(self, flag: str, top: ast.stmt) -> list[Region]:
        """Every later use of the flag must be a test at the loop body's top level:
        `if flag: <placeholders> [else: <run>]`, `if not flag: <run> [else: <placeholders>]`,
        `if not flag or <python>: <run> [else: ...]`."""
        regions: list[Region] = []
        for stmt in self.body[self.body.index(top) + 1 :]:
            if not any(isinstance(n, ast.Name) and n.id == flag for n in walk(stmt)):
                continue
            if not isinstance(stmt, ast.If):
                raise Refused(f"`{flag}` is used other than in an `if` that tests it")
            test = stmt.test
            if (
                is_name(test, flag)
                and not stmt.orelse
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Continue)
            ):
                rest = self.body[self.body.index(stmt) + 1 :]
                if any(_mentions(s, flag) for s in rest):
                    raise Refused(f"`{flag}` is used after `if {flag}: continue`")
                regions.append(Region(rest, stmt, unwrap=False))
                break
            if is_name(test, flag):
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
                alternatives = test.values[1:]
                force = (
                    alternatives[0]
                    if len(alternatives) == 1
                    else ast.copy_location(ast.BoolOp(op=ast.Or(), values=list(alternatives)), alternatives[0])
                )
                run, skipped = stmt.body, stmt.orelse
                if skipped:
                    raise Refused(f"the skipped path of `{ast.unparse(test)}` does more than the layer's placeholders")
            else:
                raise Refused(f"`{flag}` is tested in a form graphmend does not rewrite (`{ast.unparse(test)}`)")
            if any(_mentions(s, flag) for s in [*run, *skipped]):
                raise Refused(f"`{flag}` is used inside the branches it selects")
            if not _placeholders(skipped):
                raise Refused("the path taken when the layer is skipped does more than assign placeholders")
            regions.append(Region(run, stmt, force, skipped))
        if not regions:
            raise Refused(f"`{flag}` is never tested")
        last = regions[-1].header
        if last is not None and regions[-1].unwrap and liveness.live_after(self.function, last, flag):
            raise Refused(f"`{flag}` is still read after its tests")
        return regions

    def _runs_layer(self, statements: list[ast.stmt]) -> bool:
        return any(
            isinstance(n, ast.Call) and layer_call(n, self.loop, self.analysis) is not None
            for s in statements
            for n in walk(s)
        )

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
        """Write the gate (`gate_definition.define`) and take in what it decided."""
        definition = define(
            skip, site, outer, None if fresh else flag, self.analysis, self.ctx, self.torch, replace_value
        )
        self.flag = definition.flag
        self.may_be_none = self.may_be_none or definition.may_be_none
        if keep_statement:
            self.definition_text = definition.text  # written in front of the unwrapped branch, with its comments
        else:
            self.edits += definition.edits

    def _replace_statement(self, stmt: ast.stmt, text: str) -> TextEdit:
        indent = indent_of(self.ctx.source.lines[stmt.lineno - 1])
        return TextEdit(self.ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), indent + text)


# ---------------------------------------------------------------------- what both forms use
def layer_call(call: ast.Call, loop: ast.For | ast.AsyncFor | ast.While, analysis: FunctionAnalysis) -> str | None:
    """A call of a layer of the model: `layer(...)` for a loop variable over a module list,
    `self.<attribute>(...)` holding a module or a function (not a method of the class),
    or `layer.__call__` passed to a checkpointing function."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "__call__":
        func = func.value
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) and analysis.is_self(func.value.value):
        return f"{dotted(func.value)}[...]"  # an element of a module list: `self.attentions[i](...)`
    name = dotted(func)
    if name is None:
        return None
    if isinstance(func, ast.Name) and func.id in _loop_layers(loop, analysis):
        return name
    if isinstance(func, ast.Attribute) and analysis.is_self(func.value):
        owner = analysis.owner
        if owner is None or owner.find_method(func.attr) is None:
            return name  # a submodule, or a function held by the model (a checkpointing wrapper)
    return None


def inert(stmt: ast.stmt) -> bool:
    """`pass`, or a constant alone (a docstring): nothing the rewrite has to carry."""
    return isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


def unwrapped_header(ctx: FixContext, gate: Gate, region: Region, indent: str, lines: list[str]) -> TextEdit:
    """Replace a region's `if` with `lines` (its branch as rewritten), after the comments of the
    `if` that the branch does not hold and, where the `if` is the gate, the gate's definition."""
    header = region.header
    assert header is not None
    prefix = [indent + comment for comment in comments_outside(ctx, header, region.statements)]
    if gate.definition_text is not None and header is gate.stmt:
        prefix.append(indent + gate.definition_text)
    return TextEdit(ctx.line_range(header.lineno, header.end_lineno or header.lineno), "\n".join([*prefix, *lines]))


def delete_statement(ctx: FixContext, stmt: ast.stmt) -> TextEdit:
    """Remove a statement's lines (and a blank line, when it stood between two); its comments stay."""
    comments = comments_outside(ctx, stmt, [])
    if comments:
        indent = indent_of(ctx.source.lines[stmt.lineno - 1])
        return TextEdit(
            ctx.line_range(stmt.lineno, stmt.end_lineno or stmt.lineno), "\n".join(indent + c for c in comments)
        )
    lines = ctx.source.lines
    first, last = stmt.lineno - 1, stmt.end_lineno or stmt.lineno
    before_blank = first > 0 and not lines[first - 1].strip()
    if before_blank and last < len(lines) and not lines[last].strip():
        last += 1
    return TextEdit(Range(Position(first, 0), Position(last, 0)), "")


def is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


# ---------------------------------------------------------------------- helpers
def _loop_layers(loop: ast.For | ast.AsyncFor | ast.While, analysis: FunctionAnalysis) -> set[str]:
    """Names the loop binds to elements of a module list of `self` (`for i, layer in enumerate(self.layers)`)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return set()
    return _elements_of_self_lists(loop.iter, loop.target, analysis)


def _elements_of_self_lists(iterable: ast.expr, target: ast.expr, analysis: FunctionAnalysis) -> set[str]:
    """`for layer in self.layers`, `enumerate(self.layers)`, `zip(self.layers, self.norms)`: the
    names bound to elements of lists held by `self`."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and analysis.is_builtin(iterable.func.id):
        if (
            iterable.func.id == "enumerate"
            and iterable.args
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            return _elements_of_self_lists(iterable.args[0], target.elts[1], analysis)
        if iterable.func.id == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
            return set().union(*(_elements_of_self_lists(a, t, analysis) for a, t in zip(iterable.args, target.elts)))
        return set()
    if isinstance(iterable, ast.Attribute) and analysis.is_self(iterable.value) and isinstance(target, ast.Name):
        return {target.id}
    return set()


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
    if (
        not all(isinstance(s, ast.Constant) and isinstance(s.value, bool) for s in sides)
        or sides[0].value == sides[1].value  # type: ignore[attr-defined]
    ):
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
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and placeholder(s.value)
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


def _is_not_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not) and is_name(expr.operand, name)


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(node))
