"""Predicated control flow: a data-dependent `if` becomes both branches plus `torch.where`.

    if x.sum() > 10:            cond = x.sum() > 10
        z = a + b        →      z_if = a + b
    else:                       z_else = a * b
        z = a * b               z = torch.where(cond, z_if, z_else)

Each branch's statements are moved, renamed where they assign, with their comments (LibCST on the
statement's own lines only, so the rest of the file is untouched byte for byte). The rewrite is
offered only when running every branch unconditionally is provably harmless; otherwise the
diagnostic says why not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import Env, FunctionAnalysis, Kind
from .base import FixContext, Refusal
from .deferral import predicated_helper
from .purity import Signature, dotted, elementwise_bases, impurity, is_scalar_condition, names_in, unguarded_division

TITLE = "Compute both branches and select with `torch.where`"


class _Refuse(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Arm:
    """One path through the `if` chain: its condition (None for the else path) and statements."""

    test: ast.expr | None
    body: list[ast.stmt]
    cst_body: list[cst.BaseStatement]
    suffix: str
    # filled while processing
    output: list[cst.BaseStatement] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, Signature | None] = field(default_factory=dict)  # shape/dtype signature of each name now
    kinds: Env = field(default_factory=dict)
    returned: ast.expr | None = None
    returned_text: str | None = None
    trailing_call: cst.Call | None = None
    trailing_call_ast: ast.Call | None = None
    deferred: dict[int, tuple[str, cst.Call]] = field(default_factory=dict)  # output index → (helper, call)


class _Renamer(cst.CSTTransformer):
    """Renames variable reads/writes, leaving attribute names and keyword names alone."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping
        self.skip: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.skip.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))
        return True

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if id(original_node) in self.skip or original_node.value not in self.mapping:
            return updated_node
        return updated_node.with_changes(value=self.mapping[original_node.value])


def _rename(node: cst.CSTNode, mapping: dict[str, str]) -> cst.CSTNode:
    return node.visit(_Renamer(dict(mapping))) if mapping else node


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def predicate_if(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        return _Predicator(node, analysis, ctx).build()
    except _Refuse as refusal:
        return Refusal(refusal.reason)


def predicate_ternary(node: ast.IfExp, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal("torch is not imported as a module in this file")
    guarded = names_in(node.test)
    for part in (node.test, node.body, node.orelse):
        reason = impurity(part, analysis, guarded)
        if reason is not None:
            return Refusal(reason.replace("a branch", "an operand"))
    kinds = [analysis.kind(node.body), analysis.kind(node.orelse)]
    if not _mergeable(kinds, [node.body, node.orelse]):
        return Refusal("a side of the conditional expression is not a tensor or a number")
    try:
        condition = _tensor_condition(node.test, analysis, ctx, torch_name)
    except _Refuse as refusal:
        return Refusal(refusal.reason)
    text = f"{torch_name}.where({condition}, {ctx.segment(node.body)}, {ctx.segment(node.orelse)})"
    edit = TextEdit(ctx.source.node_range(node), text)
    reasons = []
    if not is_scalar_condition(node.test, analysis):
        reasons.append("the condition may have more than one element")
    signatures = {elementwise_bases(v, analysis) for v in (node.body, node.orelse)}
    if None in signatures or len(signatures) != 1:
        reasons.append("the two values may differ in shape or dtype (torch.where broadcasts and promotes)")
    if reasons:
        return Fix(f"{TITLE} (unsafe: {'; '.join(reasons)})", Applicability.UNSAFE, (edit,))
    return Fix(TITLE, Applicability.SAFE, (edit,))


def _mergeable(kinds: list[Kind], values: list[ast.expr]) -> bool:
    """Every value is a tensor or a numeric literal, and at least one is a tensor."""
    numeric = [isinstance(v, ast.Constant) and type(v.value) in (int, float) for v in values]
    return any(k.is_tensor for k in kinds) and all(k.is_tensor or n for k, n in zip(kinds, numeric))


def _tensor_condition(test: ast.expr, analysis: FunctionAnalysis, ctx: FixContext, torch_name: str) -> str:
    """The condition as tensor logic: `not`/`and`/`or` become `torch.logical_*`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return f"{torch_name}.logical_not({_tensor_condition(test.operand, analysis, ctx, torch_name)})"
    if isinstance(test, ast.BoolOp):
        for operand in test.values[:-1]:
            if _is_guard(operand):
                raise _Refuse("the condition guards a later test (`is None`, `isinstance`, `hasattr`)")
        function = "logical_and" if isinstance(test.op, ast.And) else "logical_or"
        parts = [_tensor_condition(v, analysis, ctx, torch_name) for v in test.values]
        combined = parts[0]
        for part in parts[1:]:
            combined = f"{torch_name}.{function}({combined}, {part})"
        return combined
    text = ctx.segment(test)
    kind = analysis.kind(test)
    if kind is Kind.BOOL_TENSOR:
        return text
    if kind.is_tensor:  # the truth of a number tensor is "not zero"
        simple = isinstance(test, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))
        return f"{text} != 0" if simple else f"({text}) != 0"
    return f"{torch_name}.as_tensor({text})"


def _is_guard(expr: ast.expr) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "hasattr", "callable"):
            return True
    return False


class _Predicator:
    def __init__(self, node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> None:
        self.node = node
        self.analysis = analysis
        self.ctx = ctx
        self.before: Env = dict(analysis.env)
        self.unsafe_reasons: list[str] = []
        self.following: list[ast.stmt] = []
        function = analysis.function
        if function is None:
            raise _Refuse("the `if` is not inside a function")
        self.function = function
        torch_name = ctx.torch_name
        if torch_name is None:
            raise _Refuse("torch is not imported as a module in this file")
        self.torch = torch_name

    # ------------------------------------------------------------------ structure
    def build(self) -> Fix:
        found = self._block_of(self.node)
        if found is None:
            raise _Refuse("the `if` could not be located")
        _, block, index = found
        following: list[ast.stmt] = []
        arms_end_in_return = self._all_arms_return(self.node)
        if arms_end_in_return and not self._has_else(self.node):
            following = block[index + 1 :]
            if not following or not isinstance(following[-1], ast.Return):
                raise _Refuse("only some paths return")
        self.following = following
        last_line = (following[-1] if following else self.node).end_lineno or self.node.lineno
        indent, snippet = self._snippet(self.node.lineno, last_line)
        module = cst.parse_module(snippet)
        cst_if = module.body[0]
        if not isinstance(cst_if, cst.If):
            raise _Refuse("the statement could not be isolated")
        arms, comments = self._arms(cst_if, following, list(module.body[1:]))
        guarded: set[str] = set()
        for arm in arms:
            if arm.test is not None:
                guarded |= names_in(arm.test)
        for arm in arms:
            self._process(arm, guarded)
        returns = [arm.returned is not None for arm in arms]
        if any(returns) and not all(returns):
            raise _Refuse("only some paths return")
        lines = [f"# {c.lstrip('#').strip()}" if c else "" for c in comments]
        condition_names = self._conditions(arms, lines)
        helper_edits: list[TextEdit] = []
        for number, arm in enumerate(arms):
            lines.extend(self._render(arm, self._arm_predicate(number, condition_names), helper_edits))
        lines.extend(self._merges(arms, condition_names))
        text = "\n".join((indent + line) if line.strip() else "" for line in lines)
        edits = (*helper_edits, TextEdit(self.ctx.line_range(self.node.lineno, last_line), text))
        if self.unsafe_reasons:
            return Fix(f"{TITLE} (unsafe: {'; '.join(self.unsafe_reasons)})", Applicability.UNSAFE, edits)
        return Fix(TITLE, Applicability.SAFE, edits)

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
                base, call = arm.deferred[index]
                name, insertion = predicated_helper(base, self.ctx, self.torch)
                if insertion is not None and insertion not in helper_edits:
                    helper_edits.append(insertion)
                arguments = ", ".join(_code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in call.args)
                lines.append(f"{name}({predicate}, {arguments})" if arguments else f"{name}({predicate})")
            if index < len(arm.output):
                pending.append(arm.output[index])
        flush()
        return lines

    def _arm_predicate(self, number: int, conditions: list[str]) -> str:
        """True exactly when this arm of the chain runs: its condition and none before it."""
        earlier = [f"{self.torch}.logical_not({c})" for c in conditions[:number]]
        parts = earlier + ([conditions[number]] if number < len(conditions) else [])
        predicate = parts[0]
        for part in parts[1:]:
            predicate = f"{self.torch}.logical_and({predicate}, {part})"
        return predicate

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
            raise _Refuse("the statement's lines are not uniformly indented")
        return indent, "\n".join(line[len(indent) :] for line in lines) + "\n"

    def _arms(
        self, cst_if: cst.If, following: list[ast.stmt], following_cst: list[cst.BaseStatement]
    ) -> tuple[list[_Arm], list[str]]:
        arms: list[_Arm] = []
        comments: list[str] = []
        node: ast.If = self.node
        current: cst.If = cst_if
        number = 0
        while True:
            if not self.analysis.is_data_dependent(node.test):
                raise _Refuse("an `elif` tests a Python value, not a tensor")
            suffix = "if" if number == 0 else ("elif" if number == 1 else f"elif{number}")
            comments.extend(_block_comments(current.body))
            arms.append(_Arm(node.test, node.body, list(current.body.body), suffix))
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

    # ------------------------------------------------------------------ branches
    def _process(self, arm: _Arm, guarded: set[str]) -> None:
        if len(arm.body) != len(arm.cst_body):
            raise _Refuse("a line holds several statements (`;`)")
        saved_env, saved_visitor = self.analysis.env, self.analysis.visitor
        self.analysis.env, self.analysis.visitor = dict(self.before), None
        try:
            for position, (stmt, cst_stmt) in enumerate(zip(arm.body, arm.cst_body)):
                last = position == len(arm.body) - 1
                self._statement(arm, stmt, cst_stmt, guarded, last)
            arm.kinds = dict(self.analysis.env)
        finally:
            self.analysis.env, self.analysis.visitor = saved_env, saved_visitor

    def _statement(self, arm: _Arm, stmt: ast.stmt, cst_stmt: cst.BaseStatement, guarded: set[str], last: bool) -> None:
        analysis = self.analysis
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            arm.output.append(cst_stmt)
            return
        if isinstance(stmt, ast.Return):
            if not last or stmt.value is None:
                raise _Refuse("a branch returns early or returns nothing")
            self._check(stmt.value, guarded)
            arm.returned = stmt.value
            small = _only_small(cst_stmt)
            assert isinstance(small, cst.Return) and small.value is not None
            arm.returned_text = _code(_rename(small.value, arm.mapping))
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if all(_is_name_target(t) for t in targets):
                self._check(stmt.value, guarded)
                small = _only_small(cst_stmt)
                renamed_value = _rename(small.value, arm.mapping)  # type: ignore[attr-defined]
                for target in targets:
                    for name in _target_names(target):
                        if name not in arm.mapping:
                            arm.mapping[name] = self.ctx.fresh_name(f"{name}_{arm.suffix}")
                if isinstance(small, cst.Assign):
                    new_targets = [t.with_changes(target=_rename(t.target, arm.mapping)) for t in small.targets]
                    new_small: cst.BaseSmallStatement = small.with_changes(targets=new_targets, value=renamed_value)
                else:
                    assert isinstance(small, cst.AnnAssign)
                    new_small = small.with_changes(target=_rename(small.target, arm.mapping), value=renamed_value)
                arm.output.append(cst_stmt.with_changes(body=[new_small]))  # type: ignore[call-arg]
                kind = analysis.kind(stmt.value)
                signature = self._signature(stmt.value, arm)
                for target in targets:
                    analysis._bind(target, kind, stmt.value)
                    for name in _target_names(target):
                        arm.signatures[name] = signature if isinstance(target, ast.Name) else None
                return
            if _is_idempotent_refresh(stmt):
                assert isinstance(stmt.value, ast.Call)
                for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                    self._check(argument, guarded)
                arm.output.append(_rename(cst_stmt, arm.mapping))  # type: ignore[arg-type]
                return
            raise _Refuse("a branch stores to an attribute or subscript")
        if isinstance(stmt, ast.If) and _is_lazy_init(stmt, self.function.self_name):
            self.unsafe_reasons.append("a lazily created attribute would be created even when its branch is not taken")
            arm.output.append(_rename(cst_stmt, arm.mapping))  # type: ignore[arg-type]
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and self._replayed(stmt.value):
            for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                self._check(argument, guarded)
            small = _only_small(cst_stmt)
            assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            arm.deferred[len(arm.output)] = (stmt.value.func.id, _rename(small.value, arm.mapping))  # type: ignore[attr-defined]
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
                raise _Refuse(f"a branch changes a tensor in place (`.{func.attr}`)")
            if last or self._next_is_return(arm, stmt):
                for argument in [*stmt.value.args, *(k.value for k in stmt.value.keywords)]:
                    self._check(argument, guarded)
                small = _only_small(cst_stmt)
                assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                arm.trailing_call = _rename(small.value, arm.mapping)  # type: ignore[assignment]
                arm.trailing_call_ast = stmt.value
                return
            raise _Refuse(f"a branch calls `{_call_name(stmt.value)}` for its side effect")
        kind = type(stmt).__name__.lower()
        if isinstance(stmt, ast.AugAssign):
            raise _Refuse("a branch updates a value in place (augmented assignment)")
        if isinstance(stmt, ast.If):
            raise _Refuse("a branch contains another `if`; fix the inner one first")
        raise _Refuse(f"a branch contains `{kind}`")

    def _replayed(self, call: ast.Call) -> bool:
        """A call of a module-level function registered as reorderable (a deferred print or log)."""
        func = call.func
        if not isinstance(func, ast.Name) or func.id in self.analysis.shadowed_names:
            return False
        function = self.ctx.index.functions.get(func.id)
        return function is not None and id(function.node) in self.analysis.module.regions.replayed

    def _next_is_return(self, arm: _Arm, stmt: ast.stmt) -> bool:
        index = arm.body.index(stmt)
        return index == len(arm.body) - 2 and isinstance(arm.body[-1], ast.Return)

    def _check(self, expr: ast.expr, guarded: set[str]) -> None:
        reason = impurity(expr, self.analysis, guarded)
        if reason is not None:
            raise _Refuse(reason)
        if unguarded_division(expr, guarded):
            reason = "a branch divides by a value the condition tests, so that division runs unguarded (NaN gradients)"
            if reason not in self.unsafe_reasons:
                self.unsafe_reasons.append(reason)

    # ------------------------------------------------------------------ merging
    def _conditions(self, arms: list[_Arm], lines: list[str]) -> list[str]:
        names: list[str] = []
        for arm in arms:
            if arm.test is None:
                continue
            reason = impurity(arm.test, self.analysis, set())
            if reason is not None:
                raise _Refuse(reason.replace("a branch", "the condition"))
            if not is_scalar_condition(arm.test, self.analysis):
                reason = "the condition may have more than one element"
                if reason not in self.unsafe_reasons:
                    self.unsafe_reasons.append(reason)
            if isinstance(arm.test, ast.Name) and self.analysis.kind(arm.test) is Kind.BOOL_TENSOR:
                names.append(arm.test.id)
                continue
            name = self.ctx.fresh_name("cond")
            lines.append(f"{name} = {_tensor_condition(arm.test, self.analysis, self.ctx, self.torch)}")
            names.append(name)
        return names

    def _select(self, values: list[str], conditions: list[str]) -> str:
        """where(c1, v1, where(c2, v2, v3)) for an if/elif/else chain."""
        result = values[-1]
        for condition, value in reversed(list(zip(conditions, values[:-1]))):
            result = f"{self.torch}.where({condition}, {value}, {result})"
        return result

    def _merges(self, arms: list[_Arm], conditions: list[str]) -> list[str]:
        lines: list[str] = []
        assigned: list[str] = []
        for arm in arms:
            assigned.extend(n for n in arm.mapping if n not in assigned)
        outside = self._names_used_outside()
        for name in assigned:
            values: list[str] = []
            kinds: list[Kind] = []
            missing = False
            for arm in arms:
                if name in arm.mapping:
                    values.append(arm.mapping[name])
                    kinds.append(arm.kinds.get(name, Kind.UNKNOWN))
                else:
                    missing = True
                    values.append(name)
                    kinds.append(self.before.get(name, Kind.UNKNOWN))
                if kinds[-1] is Kind.UNKNOWN and self.analysis.has_tensor_evidence(name):
                    kinds[-1] = Kind.TENSOR  # the function uses `name` as a tensor
            if missing and name not in self.before:
                if name in outside:
                    raise _Refuse(f"`{name}` would be unbound on a path that does not assign it")
                continue  # a temporary of one branch: it stays under its new name
            if not all(k.is_tensor for k in kinds):
                raise _Refuse(f"`{name}` is not a tensor on every path")
            self._require_same_shape([arm.signatures[name] if name in arm.signatures else self._old_signature(name) for arm in arms])
            lines.append(f"{name} = {self._select(values, conditions)}")
        calls = [arm.trailing_call for arm in arms]
        if any(c is not None for c in calls):
            lines.extend(self._merged_call(arms, conditions))
        if arms[0].returned is not None:
            lines.append(self._merged_return(arms, conditions))
        return lines

    def _reaching_definition(self, name: str) -> ast.expr:
        """The value `name` holds before the `if`, when plain assignments before it say so.

        Walks back through the enclosing blocks (out of `if`/`with` bodies, never out of a loop,
        where the value may come from the previous iteration).
        """
        target: ast.stmt = self.node
        while True:
            found = self._block_of(target)
            if found is None:
                return ast.Name(id=name)
            holder, block, index = found
            for stmt in reversed(block[:index]):
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    return stmt.value if len(stmt.targets) == 1 else ast.Name(id=name)
                if name in {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                    return ast.Name(id=name)
            if not isinstance(holder, (ast.If, ast.With)) or block is not getattr(holder, "body", None):
                return ast.Name(id=name)
            target = holder

    def _block_of(self, stmt: ast.stmt) -> tuple[ast.AST, list[ast.stmt], int] | None:
        for holder in ast.walk(self.function.node):
            for field_name in ("body", "orelse", "finalbody"):
                block = getattr(holder, field_name, None)
                if isinstance(block, list):
                    for index, candidate in enumerate(block):
                        if candidate is stmt:
                            return holder, block, index
        return None

    def _signature(self, value: ast.expr, arm: _Arm) -> Signature | None:
        """`value`'s signature inside `arm`: names assigned earlier in the arm, else before the `if`."""
        return elementwise_bases(
            value, self.analysis, lambda name: arm.signatures[name] if name in arm.signatures else self._old_signature(name)
        )

    def _old_signature(self, name: str) -> Signature | None:
        definition = self._reaching_definition(name)
        if isinstance(definition, ast.Name) and definition.id == name:
            return frozenset({name}), frozenset()
        return elementwise_bases(definition, self.analysis)

    def _require_same_shape(self, signatures_per_path: list[Signature | None]) -> None:
        """Mark the fix unsafe unless every path's value provably has the same shape and dtype."""
        signatures = set(signatures_per_path)
        if None in signatures or len(signatures) != 1 or not next(iter(signatures))[0]:  # type: ignore[index]
            reason = "the paths' values may differ in shape or dtype (torch.where broadcasts and promotes)"
            if reason not in self.unsafe_reasons:
                self.unsafe_reasons.append(reason)

    def _merged_call(self, arms: list[_Arm], conditions: list[str]) -> list[str]:
        calls = [arm.trailing_call for arm in arms]
        if any(c is None for c in calls):
            raise _Refuse("a branch calls a function for its side effect that another branch does not")
        first = calls[0]
        assert first is not None
        shape = [(a.keyword.value if a.keyword else None) for a in first.args]
        if any(_code(c.func) != _code(first.func) or [(a.keyword.value if a.keyword else None) for a in c.args] != shape for c in calls):  # type: ignore[union-attr]
            raise _Refuse("the branches end in different calls")
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
            registers_buffer = isinstance(first.func, cst.Attribute) and first.func.attr.value == "register_buffer"
            for arm, value in zip(arms, asts):
                if registers_buffer and not (isinstance(value, ast.Constant) and value.value is None):
                    continue  # a buffer is a tensor by register_buffer's contract
                saved = self.analysis.env
                self.analysis.env = dict(arm.kinds)
                try:
                    if not self.analysis.kind(value).is_tensor:
                        raise _Refuse("the branches call the same function with arguments that are not tensors")
                finally:
                    self.analysis.env = saved
            selected = self._select(texts, conditions)
            merged_args.append(f"{arg.keyword.value}={selected}" if arg.keyword else selected)
        return [f"{_code(first.func)}({', '.join(merged_args)})"]

    def _merged_return(self, arms: list[_Arm], conditions: list[str]) -> str:
        returned = [arm.returned for arm in arms]
        tuples = [r for r in returned if isinstance(r, ast.Tuple)]
        if tuples:
            raise _Refuse("a path returns a tuple")
        kinds = []
        for arm in arms:
            saved = self.analysis.env
            self.analysis.env = dict(arm.kinds)
            try:
                kinds.append(Kind.TENSOR if self.analysis.used_as_tensor(arm.returned) else Kind.UNKNOWN)  # type: ignore[arg-type]
            finally:
                self.analysis.env = saved
        if not all(k.is_tensor for k in kinds):
            raise _Refuse("a path returns something that is not a tensor")
        self._require_same_shape([self._signature(arm.returned, arm) for arm in arms])  # type: ignore[arg-type]
        return f"return {self._select([a.returned_text or '' for a in arms], conditions)}"

    def _names_used_outside(self) -> set[str]:
        inside = {id(n) for stmt in [self.node, *self.following] for n in ast.walk(stmt)}
        return {
            n.id
            for n in ast.walk(self.function.node)
            if isinstance(n, ast.Name) and id(n) not in inside
        }


def _block_comments(block: cst.BaseSuite) -> list[str]:
    found: list[str] = []
    if isinstance(block, cst.IndentedBlock):
        if block.header.comment is not None:
            found.append(block.header.comment.value)
        found.extend(line.comment.value for line in block.footer if line.comment)
    return found


def _only_small(statement: cst.BaseStatement) -> cst.BaseSmallStatement:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise _Refuse("a line holds several statements (`;`)")
    return statement.body[0]


def _is_name_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    return [e.id for e in target.elts if isinstance(e, ast.Name)]  # type: ignore[attr-defined]


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
