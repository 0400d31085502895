"""Predicated control flow: a data-dependent `if` becomes both branches plus `torch.where`.

    if x.sum() > 10:            cond = x.sum() > 10
        z = a + b        →      z_if = a + b
    else:                       z_else = a * b
        z = a * b               z = torch.where(cond, z_if, z_else)

Each branch's statements are moved, renamed where they assign, with their comments (LibCST on the
statement's own lines only, so the rest of the file is untouched byte for byte). The Python part of
a condition stays a Python `if` around the rewrite (`if h.dtype == torch.float16 and t.any():`
keeps `if h.dtype == torch.float16:`); stores to `self` attributes and `register_buffer` calls are
merged like names (`self.n = torch.where(cond, n_if, self.n)`). The rewrite is offered only when
running every branch unconditionally is provably harmless; otherwise the diagnostic says why not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Env, Kind
from ..messages import is_message, is_replayed
from ..semantics import walk
from ..analysis import conditions, liveness
from .base import FixContext, Refusal, Refused
from .deferral import message_in_branch, predicated_helper
from ..analysis.purity import call_caveat, dotted, impurity, names_in, unguarded_division
from ..analysis.shapes import Signature, elementwise_bases, is_scalar_condition

TITLE = "Compute both branches and select with `torch.where`"


@dataclass(frozen=True)
class _Store:
    """How a branch stores to `self.<attribute>`: plainly, or by `register_buffer(name, value, ...)`."""

    attribute: str
    buffer_keywords: str | None  # the keyword arguments' text of register_buffer; None for `self.a = v`


@dataclass
class _Arm:
    """One path through the `if` chain: its condition (None for the else path) and statements."""

    test: ast.expr | None
    body: list[ast.stmt]
    cst_body: list[cst.BaseStatement]
    suffix: str
    # filled while processing
    output: list[cst.BaseStatement] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)  # name or "self.attr" → its name in this arm
    signatures: dict[str, Signature | None] = field(default_factory=dict)  # shape/dtype signature of each name now
    kinds: Env = field(default_factory=dict)
    values: dict[str, ast.expr] = field(default_factory=dict)  # the last value assigned to each name or store
    stores: dict[str, _Store] = field(default_factory=dict)  # "self.attr" → how it is stored
    inlined: dict[str, str] = field(default_factory=dict)  # store → its value's text, used at the merge
    returned: ast.expr | None = None
    returned_text: str | None = None
    trailing_call: cst.Call | None = None
    trailing_call_ast: ast.Call | None = None
    # output index → (the `<helper>_if` to call, its arguments after the predicate)
    deferred: dict[int, tuple[str, list[str]]] = field(default_factory=dict)


class _Renamer(cst.CSTTransformer):
    """Renames variable reads/writes and `self.<attr>` stores of this branch, leaving attribute
    names and keyword names alone."""

    def __init__(self, mapping: dict[str, str], self_name: str | None) -> None:
        self.mapping = mapping
        self.self_name = self_name
        self.skip: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.skip.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        value = original_node.value
        if isinstance(value, cst.Name) and value.value == self.self_name:
            renamed = self.mapping.get(f"{self.self_name}.{original_node.attr.value}")
            if renamed is not None:
                return cst.Name(renamed)
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if id(original_node) in self.skip or original_node.value not in self.mapping:
            return updated_node
        return updated_node.with_changes(value=self.mapping[original_node.value])


class _CommentStripper(cst.CSTTransformer):
    """Drops every comment (a statement copied elsewhere keeps its comments only there)."""

    def leave_TrailingWhitespace(
        self, original_node: cst.TrailingWhitespace, updated_node: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        if original_node.comment is None:
            return updated_node
        return updated_node.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)

    def leave_Comment(self, original_node: cst.Comment, updated_node: cst.Comment) -> cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine | cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE if original_node.comment is not None else updated_node


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def predicate_if(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        return _Predicator(node, analysis, ctx).build()
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)


def predicate_ternary(node: ast.IfExp, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """`a if cond else b` → `torch.where(cond, a, b)`; a Python part of `cond` stays a Python
    conditional: `a if flag and t.any() else b` → `(torch.where(t.any(), a, b) if flag else b)`."""
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal("torch is not imported as a module in this file")
    split = conditions.split(node.test, analysis)
    guarded = names_in(split.rest)
    for part in (split.rest, node.body, node.orelse):
        reason = impurity(part, analysis, guarded, condition=part is split.rest)
        if reason is not None:
            return Refusal(reason.replace("a branch", "an operand"))
    reasons = _assumptions([split.rest, node.body, node.orelse], analysis)
    try:
        _require_mergeable(["the true value", "the false value"], [analysis.kind(node.body), analysis.kind(node.orelse)],
                           [node.body, node.orelse], reasons)
        condition = conditions.tensor_logic(split.rest, analysis, ctx.segment, torch_name)
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)
    body, orelse = _operand_text(node.body, ctx), _operand_text(node.orelse, ctx)
    text = f"{torch_name}.where({condition}, {body}, {orelse})"
    if split.static:
        text = f"{text} if {_static_text(split.static, ctx)} else {orelse}"  # in the place of a conditional expression
    typed = [name for name in analysis.caller_typed if name in names_in(split.rest)]
    if typed:  # tensors from some callers, numbers from others: the original stays for numbers
        tests = " or ".join(f"isinstance({name}, {torch_name}.Tensor)" for name in typed)
        text = f"({text}) if {tests} else ({ctx.segment(node)})"
    edit = TextEdit(ctx.source.node_range(node), text)
    if not is_scalar_condition(split.rest, analysis):
        reasons.append("the condition may have more than one element")
    signatures = {elementwise_bases(v, analysis) for v in (node.body, node.orelse)}
    if None in signatures or len(signatures) != 1:
        reasons.append("the two values may differ in shape or dtype (torch.where broadcasts and promotes)")
    if reasons:
        return Fix(f"{TITLE} (unsafe: {'; '.join(reasons)})", Applicability.UNSAFE, (edit,))
    return Fix(TITLE, Applicability.SAFE, (edit,))


def _assumptions(exprs: list[ast.expr], analysis: FunctionAnalysis) -> list[str]:
    """Why a rewrite of code reading `exprs` is unsafe although each part is allowed: a callee's
    argument checks would run where the original did not call it."""
    reasons: list[str] = []
    for expr in exprs:
        for node in walk(expr):
            caveat = call_caveat(node, analysis) if isinstance(node, ast.Call) else None
            if caveat is not None and caveat not in reasons:
                reasons.append(caveat)
    return reasons


def _operand_text(expr: ast.expr, ctx: FixContext) -> str:
    text = ctx.segment(expr)
    return f"({text})" if isinstance(expr, (ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text else text


def _static_text(operands: tuple[ast.expr, ...], ctx: FixContext) -> str:
    """The Python operands of a condition, joined with `and` as they were written."""
    texts = []
    for operand in operands:
        text = conditions.python_text(operand, ctx.segment)
        wrap = isinstance(operand, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text
        texts.append(f"({text})" if wrap else text)
    return " and ".join(texts)


def _is_number(expr: ast.expr | None) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _is_number(expr.operand)
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


def _require_mergeable(
    labels: list[str], kinds: list[Kind], values: list[ast.expr | None], reasons: list[str], where: str = ""
) -> None:
    """`torch.where` can select between tensors and numbers: refuse anything else; an unknown
    value, or numbers only, make the fix unsafe (it fails loudly, or yields a 0-d tensor)."""
    numbers = [_is_number(v) for v in values]
    for label, kind, number in zip(labels, kinds, numbers):
        if kind.is_tensor or number:
            continue
        if kind is Kind.UNKNOWN:
            reason = f"{label} is not known to be a tensor or a number"
            if reason not in reasons:
                reasons.append(reason)
            continue
        what = "None" if kind is Kind.NONE else "a Python value"
        raise Refused(f"{label} is {what}{where}, not a tensor or a number")
    if not any(k.is_tensor for k in kinds):
        reason = f"{' and '.join(dict.fromkeys(labels))} may become a 0-d tensor"
        if reason not in reasons:
            reasons.append(reason)


class _Predicator:
    def __init__(self, node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> None:
        self.node = node
        self.analysis = analysis
        self.ctx = ctx
        self.before: Env = dict(analysis.env)
        self.unsafe_reasons: list[str] = []
        self.following: list[ast.stmt] = []
        self.kept: set[str] = set()  # temporaries of one branch that keep their own name
        self.floating: set[str] = set()  # tensors the condition's Python part proves floating point
        self.message_edits: list[TextEdit] = []  # helpers for the messages of the branches
        self.head_comments = 0  # how many of the collected comments belong to the first branch
        function = analysis.function
        if function is None:
            raise Refused("the `if` is not inside a function")
        self.function = function
        self.self_name = function.self_name
        torch_name = ctx.torch_name
        if torch_name is None:
            raise Refused("torch is not imported as a module in this file")
        self.torch = torch_name

    def _unsafe(self, reason: str) -> None:
        if reason not in self.unsafe_reasons:
            self.unsafe_reasons.append(reason)

    # ------------------------------------------------------------------ structure
    def build(self) -> Fix:
        found = liveness.locate(self.function.node, self.node)
        if found is None:
            raise Refused("the `if` could not be located")
        _, block, index = found
        following: list[ast.stmt] = []
        arms_end_in_return = self._all_arms_return(self.node)
        if arms_end_in_return and not self._has_else(self.node):
            following = block[index + 1 :]
            if not following or not isinstance(following[-1], ast.Return):
                raise Refused("only some paths return")
        self.following = following
        split = conditions.split(self.node.test, self.analysis)
        self.floating = set().union(*(_floating_names(e, self.analysis) for e in split.static)) if split.static else set()
        last_line = (following[-1] if following else self.node).end_lineno or self.node.lineno
        indent, snippet = self._snippet(self.node.lineno, last_line)
        module = cst.parse_module(snippet)
        cst_if = module.body[0]
        if not isinstance(cst_if, cst.If):
            raise Refused("the statement could not be isolated")
        arms, comments = self._arms(cst_if, following, list(module.body[1:]), split.rest)
        if split.static:
            # The paths after the first stay as written under the Python part's `else`, comments
            # and all: their copies in the rewrite carry none, so no comment appears twice.
            comments = comments[: self.head_comments]
            for arm in arms[1:]:
                arm.cst_body = [s.visit(_CommentStripper()) for s in arm.cst_body]  # type: ignore[misc]
        guarded: set[str] = set()
        for arm in arms:
            if arm.test is not None:
                guarded |= names_in(arm.test)
        self.kept = self._temporaries(arms)
        for arm in arms:
            self._process(arm, guarded)
        returns = [arm.returned is not None for arm in arms]
        if any(returns) and not all(returns):
            raise Refused("only some paths return")
        lines = [f"# {c.lstrip('#').strip()}" if c else "" for c in comments]
        condition_names = self._conditions(arms, lines)
        helper_edits: list[TextEdit] = []
        for number, arm in enumerate(arms):
            lines.extend(self._render(arm, self._arm_predicate(number, condition_names), helper_edits))
        lines.extend(self._merges(arms, condition_names))
        helper_edits.extend(e for e in self.message_edits if e not in helper_edits)
        if split.static:
            inner = indent + self._indent_unit()
            body = "\n".join((inner + line) if line.strip() else "" for line in lines)
            text = f"{indent}if {_static_text(split.static, self.ctx)}:\n{body}"
            if self.node.orelse or following:
                text += "\n" + self._original_rest()
        else:
            text = "\n".join((indent + line) if line.strip() else "" for line in lines)
        edits = (*helper_edits, TextEdit(self.ctx.line_range(self.node.lineno, last_line), text))
        if self.unsafe_reasons:
            return Fix(f"{TITLE} (unsafe: {'; '.join(self.unsafe_reasons)})", Applicability.UNSAFE, edits)
        return Fix(TITLE, Applicability.SAFE, edits)

    def _indent_unit(self) -> str:
        """One level of indentation as this statement's body uses it (spaces or a tab)."""
        first = self.ctx.source.lines[self.node.body[0].lineno - 1]
        outer = self.ctx.source.lines[self.node.lineno - 1]
        body_indent = first[: len(first) - len(first.lstrip())]
        outer_indent = outer[: len(outer) - len(outer.lstrip())]
        unit = body_indent[len(outer_indent) :] if body_indent.startswith(outer_indent) else ""
        return unit or "    "

    def _original_rest(self) -> str:
        """What runs when the condition's Python part is false, exactly as written: the `elif`/
        `else` clauses, or the statements after an `if` whose branches all return."""
        lines = self.ctx.source.lines
        if self.following:
            first = self.following[0].lineno - 1
            while first > (self.node.end_lineno or self.node.lineno) and not lines[first - 1].strip() == "":
                first -= 1  # comments just above the first following statement
            return "\n".join(lines[first : (self.following[-1].end_lineno or self.following[-1].lineno)])
        outer = lines[self.node.lineno - 1]
        indent = outer[: len(outer) - len(outer.lstrip())]
        start = self.node.orelse[0].lineno - 1
        while start > self.node.lineno - 1:
            start -= 1
            text = lines[start][len(indent) :] if lines[start].startswith(indent) else ""
            if text.startswith(("else", "elif")) and not text[4:5].isidentifier():
                break
        else:
            raise Refused("the `else` could not be located")
        return "\n".join(lines[start : (self.node.end_lineno or self.node.lineno)])

    def _render(self, arm: _Arm, predicate: str, helper_edits: list[TextEdit]) -> list[str]:
        """The arm's statements as lines; its deferred calls carry the arm's predicate."""
        lines: list[str] = []
        pending: list[cst.BaseStatement] = []

        def flush() -> None:
            if pending:
                lines.extend(cst.Module(body=list(pending)).code.rstrip("\n").split("\n"))
                pending.clear()

        for index in range(len(arm.output) + 1):
            if index in arm.deferred:
                flush()
                name, arguments = arm.deferred[index]
                lines.append(f"{name}({', '.join([predicate, *arguments])})")
            if index < len(arm.output):
                pending.append(arm.output[index])
        flush()
        return lines

    def _arm_predicate(self, number: int, conditions_: list[str]) -> str:
        """True exactly when this arm of the chain runs: its condition and none before it."""
        parts = [f"~{c}" for c in conditions_[:number]]
        if number < len(conditions_):
            parts.append(conditions_[number])
        return " & ".join(parts)

    @staticmethod
    def _has_else(node: ast.If) -> bool:
        current = node
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
        return bool(current.orelse)

    @staticmethod
    def _all_arms_return(node: ast.If) -> bool:
        current: ast.If | None = node
        while current is not None:
            if not current.body or not isinstance(current.body[-1], ast.Return):
                return False
            nxt = current.orelse
            current = nxt[0] if len(nxt) == 1 and isinstance(nxt[0], ast.If) else None
        return True

    def _snippet(self, first: int, last: int) -> tuple[str, str]:
        lines = self.ctx.source.lines[first - 1 : last]
        first_line = lines[0]
        indent = first_line[: len(first_line) - len(first_line.lstrip())]
        if any(line.strip() and not line.startswith(indent) for line in lines):
            raise Refused("the statement's lines are not uniformly indented")
        return indent, "\n".join(line[len(indent) :] for line in lines) + "\n"

    def _arms(
        self, cst_if: cst.If, following: list[ast.stmt], following_cst: list[cst.BaseStatement], head_test: ast.expr
    ) -> tuple[list[_Arm], list[str]]:
        arms: list[_Arm] = []
        comments: list[str] = []
        node: ast.If = self.node
        current: cst.If = cst_if
        number = 0
        while True:
            test = head_test if number == 0 else node.test
            if not self.analysis.is_data_dependent(test):
                raise Refused("an `elif` tests a Python value, not a tensor")
            suffix = "if" if number == 0 else ("elif" if number == 1 else f"elif{number}")
            comments.extend(_block_comments(current.body))
            if number == 0:
                self.head_comments = len(comments)
            arms.append(_Arm(test, node.body, list(current.body.body), suffix))
            number += 1
            orelse = current.orelse
            if isinstance(orelse, cst.If):
                comments.extend(c.comment.value for c in orelse.leading_lines if c.comment)
                node = node.orelse[0]  # type: ignore[assignment]
                current = orelse
                continue
            if isinstance(orelse, cst.Else):
                comments.extend(c.comment.value for c in orelse.leading_lines if c.comment)
                comments.extend(_block_comments(orelse.body))
                arms.append(_Arm(None, node.orelse, list(orelse.body.body), "else"))
            elif following:
                arms.append(_Arm(None, following, following_cst, "else"))
            else:
                arms.append(_Arm(None, [], [], "else"))
            return arms, comments

    def _temporaries(self, arms: list[_Arm]) -> set[str]:
        """Names bound by exactly one branch, read by no other branch nor any condition, and dead
        after the `if`: they can keep their name (no merge, no rename)."""
        assigned: list[set[str]] = [
            {n for stmt in arm.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
             for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) for n in _bound(t)}
            for arm in arms
        ]
        read: list[set[str]] = [{n.id for stmt in arm.body for n in walk(stmt) if isinstance(n, ast.Name)} for arm in arms]
        tests = {n.id for arm in arms if arm.test is not None for n in walk(arm.test) if isinstance(n, ast.Name)}
        end = self.following[-1] if self.following else self.node
        kept: set[str] = set()
        for number, names in enumerate(assigned):
            others = [i for i in range(len(arms)) if i != number]
            for name in names:
                if name in tests or any(name in assigned[i] or name in read[i] for i in others):
                    continue
                if not liveness.live_after(self.function.node, end, name):
                    kept.add(name)
        return kept

    # ------------------------------------------------------------------ branches
    def _process(self, arm: _Arm, guarded: set[str]) -> None:
        if len(arm.body) != len(arm.cst_body):
            raise Refused("a line holds several statements (`;`)")
        saved_env, saved_visitor = self.analysis.env, self.analysis.visitor
        self.analysis.env, self.analysis.visitor = dict(self.before), None
        try:
            for position, (stmt, cst_stmt) in enumerate(zip(arm.body, arm.cst_body)):
                last = position == len(arm.body) - 1
                self._statement(arm, stmt, cst_stmt, guarded, last)
            arm.kinds = {**self.analysis.env, **arm.kinds}  # names, then the stores ("self.a") kept while processing
        finally:
            self.analysis.env, self.analysis.visitor = saved_env, saved_visitor

    def _rename_text(self, text: str, arm: _Arm) -> str:
        """An expression's text with this branch's renamings applied (so far)."""
        if not arm.mapping:
            return text
        return _code(self._rename(cst.parse_expression(text), arm))

    def _rename(self, node: cst.CSTNode, arm: _Arm) -> cst.CSTNode:
        return node.visit(_Renamer(dict(arm.mapping), self.self_name)) if arm.mapping else node

    def _statement(self, arm: _Arm, stmt: ast.stmt, cst_stmt: cst.BaseStatement, guarded: set[str], last: bool) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            arm.output.append(cst_stmt)
            return
        if isinstance(stmt, ast.Return):
            if not last or stmt.value is None:
                raise Refused("a branch returns early or returns nothing")
            self._check(stmt.value, guarded)
            arm.returned = stmt.value
            small = _only_small(cst_stmt)
            assert isinstance(small, cst.Return) and small.value is not None
            arm.returned_text = _code(self._rename(small.value, arm))
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if all(_is_name_target(t) for t in targets):
                self._assign_names(arm, stmt, cst_stmt, targets, guarded)
                return
            if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and all(
                _is_name_target(e) or self._self_attribute(e) is not None for e in targets[0].elts
            ):
                for element in targets[0].elts:  # `inv_freq, self.scaling = ...`: the attributes are stores
                    attribute = self._self_attribute(element)
                    if attribute is not None:
                        self._declare_store(arm, attribute, None)
                self._assign_names(arm, stmt, cst_stmt, targets, guarded)
                return
            if _is_idempotent_refresh(stmt):
                assert isinstance(stmt.value, ast.Call)
                for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                    self._check(argument, guarded)
                arm.output.append(self._rename(cst_stmt, arm))  # type: ignore[arg-type]
                return
            attribute = self._self_attribute(targets[0]) if len(targets) == 1 and isinstance(stmt, ast.Assign) else None
            if attribute is None:
                raise Refused("a branch stores to a subscript or to an attribute of something other than `self`")
            self._store(arm, attribute, None, stmt.value, _only_small(cst_stmt).value, guarded)  # type: ignore[attr-defined]
            return
        if isinstance(stmt, ast.If) and _is_lazy_init(stmt, self.self_name):
            self._unsafe("a lazily created attribute would be created even when its branch is not taken (and under "
                         "torch.compile the model compiles again on its second call: Dynamo guards on the attribute's absence)")
            arm.output.append(self._rename(cst_stmt, arm))  # type: ignore[arg-type]
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_replayed(stmt.value, self.analysis):
            for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                self._check(argument, guarded)
            small = _only_small(cst_stmt)
            assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            name, insertion = predicated_helper(stmt.value.func.id, self.ctx, self.torch)  # type: ignore[attr-defined]
            if insertion is not None:
                self.message_edits.append(insertion)
            renamed = self._rename(small.value, arm)
            assert isinstance(renamed, cst.Call)
            arm.deferred[len(arm.output)] = (name, [_code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in renamed.args])
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_message(stmt.value, self.analysis):
            for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                self._check(argument, guarded)
            try:
                name, arguments, edits, reasons = message_in_branch(stmt.value, self.analysis, self.ctx)
            except Refused as refusal:
                raise Refused(f"a message in a branch cannot be deferred: {refusal.reason}") from None
            self.message_edits.extend(e for e in edits if e not in self.message_edits)
            for reason in reasons:
                self._unsafe(reason)
            arm.deferred[len(arm.output)] = (name, [self._rename_text(a, arm) for a in arguments])
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            buffer = self._buffer_registration(stmt.value)
            if buffer is not None:
                name, value, keywords = buffer
                small = _only_small(cst_stmt)
                assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                self._store(arm, name, keywords, value, small.value.args[1].value, guarded)
                return
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
                raise Refused(f"a branch changes a tensor in place (`.{func.attr}`)")
            if last or self._next_is_return(arm, stmt):
                for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                    self._check(argument, guarded)
                small = _only_small(cst_stmt)
                assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                arm.trailing_call = self._rename(small.value, arm)  # type: ignore[assignment]
                arm.trailing_call_ast = stmt.value
                return
            raise Refused(f"a branch calls `{_call_name(stmt.value)}` for its side effect")
        kind = type(stmt).__name__.lower()
        if isinstance(stmt, ast.AugAssign):
            raise Refused("a branch updates a value in place (augmented assignment)")
        if isinstance(stmt, ast.If):
            raise Refused("a branch contains another `if`; fix the inner one first")
        raise Refused(f"a branch contains `{kind}`")

    def _assign_names(
        self, arm: _Arm, stmt: ast.Assign | ast.AnnAssign, cst_stmt: cst.BaseStatement, targets: list[ast.expr], guarded: set[str]
    ) -> None:
        assert stmt.value is not None
        self._check(stmt.value, guarded)
        small = _only_small(cst_stmt)
        renamed_value = self._rename(small.value, arm)  # type: ignore[attr-defined]
        for target in targets:
            for name in _bound(target):
                if name not in arm.mapping and name not in self.kept:
                    arm.mapping[name] = self.ctx.fresh_name(f"{name}_{arm.suffix}")
        if isinstance(small, cst.Assign):
            new_targets = [t.with_changes(target=self._rename(t.target, arm)) for t in small.targets]
            new_small: cst.BaseSmallStatement = small.with_changes(targets=new_targets, value=renamed_value)
        else:
            assert isinstance(small, cst.AnnAssign)
            new_small = small.with_changes(target=self._rename(small.target, arm), value=renamed_value)
        arm.output.append(cst_stmt.with_changes(body=[new_small]))  # type: ignore[call-arg]
        kind = self.analysis.kind(stmt.value)
        signature = self._signature(stmt.value, arm)
        for target in targets:
            self.analysis._bind(target, kind, stmt.value)
            for name in _bound(target):
                arm.signatures[name] = signature if isinstance(target, ast.Name) else None
                arm.values[name] = stmt.value if isinstance(target, ast.Name) else None  # type: ignore[assignment]

    def _self_attribute(self, target: ast.expr) -> str | None:
        """`self.a` → "a" (a plain attribute of the instance), else None."""
        if isinstance(target, ast.Attribute) and self.self_name and isinstance(target.value, ast.Name) and target.value.id == self.self_name:
            return target.attr
        return None

    def _buffer_registration(self, call: ast.Call) -> tuple[str, ast.expr, str] | None:
        """`self.register_buffer("name", value, persistent=...)` → (name, value, keywords text)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "register_buffer" and self._self_attribute(func) is not None):
            return None
        if len(call.args) != 2 or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
            return None
        if any(k.arg is None for k in call.keywords):
            return None
        return call.args[0].value, call.args[1], ", ".join(self.ctx.segment(k) for k in call.keywords)

    def _declare_store(self, arm: _Arm, attribute: str, buffer_keywords: str | None) -> str:
        """Record that this branch stores `self.<attribute>`; the attribute must exist before the `if`."""
        key = f"{self.self_name}.{attribute}"
        store = _Store(attribute, buffer_keywords)
        if arm.stores.setdefault(key, store) != store:
            raise Refused(f"a branch stores `{key}` in two different ways")
        method = self.function.method
        if method is None or method.owner is None or attribute not in self.analysis.module.init_values(method.owner):
            raise Refused(f"a branch stores to an attribute (`{key}`) that `__init__` does not set, so the other path would read it before it exists")
        if key not in arm.mapping:
            arm.mapping[key] = self.ctx.fresh_name(f"{attribute}_{arm.suffix}")
            arm.kinds[key] = Kind.UNKNOWN
        return key

    def _store(self, arm: _Arm, attribute: str, buffer_keywords: str | None, value: ast.expr, cst_value: cst.BaseExpression, guarded: set[str]) -> None:
        """A branch's store to `self.<attribute>`: its value goes to a name of the branch (or is
        used as written when it is a constant or a plain name), merged after the branches."""
        self._check(value, guarded)
        key = f"{self.self_name}.{attribute}"
        known = key in arm.mapping
        self._declare_store(arm, attribute, buffer_keywords)
        if not known:
            del arm.mapping[key]  # decided below: inlined, or a name of the branch
        renamed = self._rename(cst_value, arm)
        stored_later = self._stored_later(arm, value)
        if key not in arm.mapping and not stored_later and (_is_number(value) or isinstance(value, (ast.Name, ast.Attribute))):
            arm.inlined[key] = _code(renamed)
        else:
            arm.inlined.pop(key, None)
            if key not in arm.mapping:
                arm.mapping[key] = self.ctx.fresh_name(f"{attribute}_{arm.suffix}")
            statement = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(arm.mapping[key]))], value=renamed)])
            arm.output.append(statement)
        arm.values[key] = value
        arm.kinds[key] = Kind.TENSOR if buffer_keywords is not None and not _is_none(value) else self.analysis.kind(value)
        arm.signatures[key] = self._signature(value, arm)

    def _stored_later(self, arm: _Arm, value: ast.expr) -> bool:
        """Whether a later statement of the branch rebinds what `value` reads (then it cannot be
        inlined at the merge, after the whole branch has run)."""
        read = names_in(value)
        position = next((i for i, s in enumerate(arm.body) if any(n is value for n in walk(s))), len(arm.body))
        for stmt in arm.body[position + 1 :]:
            for node in walk(stmt):
                if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store) and dotted(node) in read:
                    return True
                if isinstance(node, ast.Call) and self._buffer_registration(node) is not None:
                    if f"{self.self_name}.{self._buffer_registration(node)[0]}" in read:  # type: ignore[index]
                        return True
        return False

    def _class_attributes(self) -> dict[str, Kind]:
        method = self.function.method
        if method is None or method.owner is None:
            return {}
        return self.analysis.module.class_attributes(method.owner)

    def _next_is_return(self, arm: _Arm, stmt: ast.stmt) -> bool:
        index = arm.body.index(stmt)
        return index == len(arm.body) - 2 and isinstance(arm.body[-1], ast.Return)

    def _check(self, expr: ast.expr, guarded: set[str]) -> None:
        reason = impurity(expr, self.analysis, guarded)
        if reason is not None:
            raise Refused(reason)
        for assumption in _assumptions([expr], self.analysis):
            self._unsafe(assumption)
        if unguarded_division(expr, guarded):
            self._unsafe("a branch divides by a value the condition tests, so that division runs unguarded (NaN gradients)")

    # ------------------------------------------------------------------ merging
    def _conditions(self, arms: list[_Arm], lines: list[str]) -> list[str]:
        names: list[str] = []
        for arm in arms:
            if arm.test is None:
                continue
            reason = impurity(arm.test, self.analysis, set(), condition=True)
            if reason is not None:
                raise Refused(reason.replace("a branch", "the condition"))
            typed = [name for name in self.analysis.caller_typed if name in names_in(arm.test)]
            if typed:
                raise Refused(f"`{typed[0]}` is a tensor only for some callers (compiled code of another file passes one; "
                              f"its annotation says `{self.analysis.caller_typed[typed[0]] or 'nothing'}`): "
                              "a rewrite must keep working for a Python value")
            for assumption in _assumptions([arm.test], self.analysis):
                self._unsafe(assumption)
            if not is_scalar_condition(arm.test, self.analysis):
                self._unsafe("the condition may have more than one element")
            if isinstance(arm.test, ast.Name) and self.analysis.kind(arm.test) is Kind.BOOL_TENSOR:
                names.append(arm.test.id)
                continue
            text = conditions.tensor_logic(arm.test, self.analysis, self.ctx.segment, self.torch)
            if "\n" in text and not text.startswith("("):
                text = f"({text})"
            name = self.ctx.fresh_name("cond")
            lines.append(f"{name} = {text}")
            names.append(name)
        return names

    def _select(self, values: list[str], conditions_: list[str]) -> str:
        """where(c1, v1, where(c2, v2, v3)) for an if/elif/else chain."""
        result = values[-1]
        for condition, value in reversed(list(zip(conditions_, values[:-1]))):
            result = f"{self.torch}.where({condition}, {value}, {result})"
        return result

    def _merges(self, arms: list[_Arm], conditions_: list[str]) -> list[str]:
        lines: list[str] = []
        assigned: list[str] = []
        for arm in arms:
            assigned.extend(n for n in [*arm.mapping, *arm.inlined] if n not in assigned)
        end = self.following[-1] if self.following else self.node
        for name in assigned:
            store = next((arm.stores[name] for arm in arms if name in arm.stores), None)
            values: list[str] = []
            kinds: list[Kind] = []
            literals: list[ast.expr | None] = []
            missing = False
            for arm in arms:
                if name in arm.mapping or name in arm.inlined:
                    values.append(arm.inlined.get(name) or arm.mapping[name])
                    kinds.append(arm.kinds.get(name, Kind.UNKNOWN))
                    literals.append(arm.values.get(name))
                else:
                    missing = True
                    values.append(name)
                    literals.append(self._initial_value(store))
                    kinds.append(self._old_kind(name, store))
                if kinds[-1] is Kind.UNKNOWN and store is None and self.analysis.has_tensor_evidence(name):
                    kinds[-1] = Kind.TENSOR  # the function uses `name` as a tensor
            if store is None and missing and name not in self.before:
                if liveness.live_after(self.function.node, end, name):
                    raise Refused(f"`{name}` would be unbound on a path that does not assign it")
                continue  # a temporary of one branch: it stays under its new name
            if store is not None and any(name in arm.stores and arm.stores[name] != store for arm in arms):
                raise Refused(f"the branches store `{name}` in different ways")
            label = f"`{name}`"
            _require_mergeable([label] * len(kinds), kinds, literals, self.unsafe_reasons, " on some path")
            if store is not None and not all(k.is_tensor for k in kinds):
                self._unsafe(f"{label} may change from a Python number to a 0-d tensor")
            if store is not None:
                self._keep_on_module(label)
            self._require_same_shape([arm.signatures[name] if name in arm.signatures else self._old_signature(name) for arm in arms])
            selected = self._select(values, conditions_)
            if store is None:
                lines.append(f"{name} = {selected}")
            elif store.buffer_keywords is None:
                lines.append(f"{name} = {selected}")
            else:
                keywords = f", {store.buffer_keywords}" if store.buffer_keywords else ""
                lines.append(f'{self.self_name}.register_buffer("{store.attribute}", {selected}{keywords})')
        calls = [arm.trailing_call for arm in arms]
        if any(c is not None for c in calls):
            lines.extend(self._merged_call(arms, conditions_))
        if arms[0].returned is not None:
            lines.append(self._merged_return(arms, conditions_))
        return lines

    def _keep_on_module(self, label: str) -> None:
        """A merged store keeps a tensor the graph computed on the module. Under CUDA graphs that
        tensor lives in the graph's memory pool and the next replay overwrites it, so the next call
        fails ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run":
        Phi-3's longrope `inv_freq`, measured on an H100 with torch 2.11): refused where the code is
        recorded as CUDA graphs, unsafe elsewhere."""
        recorded = self.ctx.cuda_graph_scope(self.analysis.entry)
        if recorded is not None:
            raise Refused(f"{label} would keep a tensor computed in the graph on the module, which the next "
                          f"CUDA-graph replay overwrites ({recorded})")
        self._unsafe(f"{label} keeps a tensor computed in the graph on the module: under CUDA graphs "
                     '(`mode="reduce-overhead"`) the next call fails, its memory overwritten by the replay')

    def _initial_value(self, store: _Store | None) -> ast.expr | None:
        """What `__init__` assigns to a stored attribute, when that is its one value there (so a
        number literal there makes the attribute a number)."""
        method = self.function.method
        if store is None or method is None or method.owner is None:
            return None
        values = self.analysis.module.init_values(method.owner).get(store.attribute, [])
        return values[0][1] if len(values) == 1 else None

    def _old_kind(self, name: str, store: _Store | None) -> Kind:
        """The kind of what a name or stored attribute holds before the `if`."""
        if store is None:
            return self.before.get(name, Kind.UNKNOWN)
        if store.buffer_keywords is not None:
            return Kind.TENSOR
        return self._class_attributes().get(store.attribute, Kind.UNKNOWN)

    def _reaching_definition(self, name: str) -> ast.expr:
        """The value `name` holds before the `if`, when plain assignments before it say so.

        Walks back through the enclosing blocks (out of `if`/`with` bodies, never out of a loop,
        where the value may come from the previous iteration).
        """
        target: ast.stmt = self.node
        while True:
            found = liveness.locate(self.function.node, target)
            if found is None:
                return ast.Name(id=name)
            holder, block, index = found
            for stmt in reversed(block[:index]):
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    return stmt.value if len(stmt.targets) == 1 else ast.Name(id=name)
                if name in {n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                    return ast.Name(id=name)
            if not isinstance(holder, (ast.If, ast.With)) or block is not getattr(holder, "body", None):
                return ast.Name(id=name)
            target = holder  # type: ignore[assignment]

    def _signature(self, value: ast.expr, arm: _Arm) -> Signature | None:
        """`value`'s signature inside `arm`: names assigned earlier in the arm, else before the `if`."""
        return elementwise_bases(
            value, self.analysis, lambda name: arm.signatures[name] if name in arm.signatures else self._old_signature(name)
        )

    def _old_signature(self, name: str) -> Signature | None:
        if "." in name:  # a stored attribute: its value before the `if` is opaque
            return frozenset({name}), frozenset()
        definition = self._reaching_definition(name)
        if isinstance(definition, ast.Name) and definition.id == name:
            return frozenset({name}), frozenset()
        # Elementwise in other names: compare by those; anything else is this one tensor.
        return elementwise_bases(definition, self.analysis) or (frozenset({name}), frozenset())

    def _require_same_shape(self, signatures_per_path: list[Signature | None]) -> None:
        """Mark the fix unsafe unless every path's value provably has the same shape and dtype."""
        signatures = {self._without_promotion(s) for s in signatures_per_path}
        if None in signatures or len(signatures) != 1 or not next(iter(signatures))[0]:  # type: ignore[index]
            self._unsafe("the paths' values may differ in shape or dtype (torch.where broadcasts and promotes)")

    def _without_promotion(self, signature: Signature | None) -> Signature | None:
        """A Python float cannot change the dtype of a tensor known to be floating point."""
        if signature is not None and signature[0] and signature[0] <= self.floating:
            return signature[0], frozenset()
        return signature

    def _merged_call(self, arms: list[_Arm], conditions_: list[str]) -> list[str]:
        calls = [arm.trailing_call for arm in arms]
        if any(c is None for c in calls):
            raise Refused("a branch calls a function for its side effect that another branch does not")
        first = calls[0]
        assert first is not None
        shape = [(a.keyword.value if a.keyword else None) for a in first.args]
        if any(_code(c.func) != _code(first.func) or [(a.keyword.value if a.keyword else None) for a in c.args] != shape for c in calls):  # type: ignore[union-attr]
            raise Refused("the branches end in different calls")
        merged_args: list[str] = []
        for position, arg in enumerate(first.args):
            texts = [_code(c.args[position].value) for c in calls]  # type: ignore[union-attr]
            if len(set(texts)) == 1:
                merged_args.append(_code(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
                continue
            asts = [
                (arm.trailing_call_ast.args + [k.value for k in arm.trailing_call_ast.keywords])[position]  # type: ignore[union-attr]
                for arm in arms
            ]
            for arm, value in zip(arms, asts):
                saved = self.analysis.env
                self.analysis.env = dict(arm.kinds)
                try:
                    if not self.analysis.kind(value).is_tensor:
                        raise Refused("the branches call the same function with arguments that are not tensors")
                finally:
                    self.analysis.env = saved
            selected = self._select(texts, conditions_)
            merged_args.append(f"{arg.keyword.value}={selected}" if arg.keyword else selected)
        return [f"{_code(first.func)}({', '.join(merged_args)})"]

    def _merged_return(self, arms: list[_Arm], conditions_: list[str]) -> str:
        returned = [arm.returned for arm in arms]
        tuples = [r for r in returned if isinstance(r, ast.Tuple)]
        if tuples:
            raise Refused("a path returns a tuple")
        kinds = []
        for arm in arms:
            saved = self.analysis.env
            self.analysis.env = dict(arm.kinds)
            try:
                kind = self.analysis.kind(arm.returned)  # type: ignore[arg-type]
                if kind is Kind.NONE:
                    raise Refused("a path returns None where another returns a tensor")
                kinds.append(Kind.TENSOR if self.analysis.used_as_tensor(arm.returned) else Kind.UNKNOWN)  # type: ignore[arg-type]
            finally:
                self.analysis.env = saved
        for arm, kind in zip(arms, kinds):
            if not kind.is_tensor:
                raise Refused(f"a path returns `{arm.returned_text}`, which is not known to be a tensor")
        self._require_same_shape([self._signature(arm.returned, arm) for arm in arms])  # type: ignore[arg-type]
        return f"return {self._select([a.returned_text or '' for a in arms], conditions_)}"


def _floating_names(test: ast.expr, analysis: FunctionAnalysis) -> set[str]:
    """Tensors a true `test` proves floating point: `x.dtype == torch.float16`, `x.is_floating_point()`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Attribute) and test.left.attr == "dtype":
        base = dotted(test.left.value)
        right = test.comparators[0]
        candidates = right.elts if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
        if base is not None and isinstance(test.ops[0], (ast.Eq, ast.Is, ast.In)) and candidates and all(
            (analysis.qualified_name(c) or "").removeprefix("torch.") in _FLOATING_DTYPES for c in candidates
        ):
            return {base}
    if isinstance(test, ast.Call) and len(test.args) <= 1:
        func = test.func
        if isinstance(func, ast.Attribute) and func.attr == "is_floating_point" and not test.args:
            base = dotted(func.value)
            return {base} if base is not None else set()
        if analysis.qualified_name(func) == "torch.is_floating_point" and test.args:
            base = dotted(test.args[0])
            return {base} if base is not None else set()
    return set()


_FLOATING_DTYPES = frozenset("float16 half float32 float float64 double bfloat16".split())


def _block_comments(block: cst.BaseSuite) -> list[str]:
    found: list[str] = []
    if isinstance(block, cst.IndentedBlock):
        if block.header.comment is not None:
            found.append(block.header.comment.value)
        found.extend(line.comment.value for line in block.footer if line.comment)
    return found


def _only_small(statement: cst.BaseStatement) -> cst.BaseSmallStatement:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise Refused("a line holds several statements (`;`)")
    return statement.body[0]


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _is_name_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)


def _bound(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def _call_name(call: ast.Call) -> str:
    return dotted(call.func) or "a function"  # type: ignore[arg-type]


def _is_idempotent_refresh(stmt: ast.Assign | ast.AnnAssign) -> bool:
    """`self.a = self.a.to(device)`: running it again leaves everything as it was."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    value = stmt.value
    if len(targets) != 1 or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    target = dotted(targets[0])
    return target is not None and value.func.attr == "to" and dotted(value.func.value) == target


def _is_lazy_init(stmt: ast.If, self_name: str | None) -> bool:
    """`if not hasattr(self, "cache"): self.cache = ...` with nothing else."""
    test = stmt.test
    if self_name is None or stmt.orelse or not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return False
    call = test.operand
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "hasattr"
        and len(call.args) == 2
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == self_name
        and isinstance(call.args[1], ast.Constant)
    ):
        return False
    attribute = f"{self_name}.{call.args[1].value}"
    for body_stmt in stmt.body:
        if not isinstance(body_stmt, ast.Assign):
            return False
        stored = [dotted(e) for t in body_stmt.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
        if attribute not in stored:
            return False
    return True
