"""The arms of the `if` chain, and the names their bindings take.

Each branch's assignments and `self.` stores get names of the branch (`z` → `z_if`, `self.n` →
`n_if`) so that every branch can run in turn; the merge after them selects between those names.
The statements are renamed with LibCST, which keeps their comments and layout.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from ...analysis import liveness
from ...analysis.purity import dotted, names_in
from ...analysis.shapes import Signature
from ...kinds import Env, Kind
from ...semantics import walk
from ..base import Refused
from .shield import Shields, shielded
from .signatures import signature
from .site import Site


@dataclass(frozen=True)
class Store:
    """How a branch stores to `self.<attribute>`: plainly, or by `register_buffer(name, value, ...)`."""

    attribute: str
    buffer_keywords: str | None  # the keyword arguments' text of register_buffer; None for `self.a = v`


@dataclass
class Arm:
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
    stores: dict[str, Store] = field(default_factory=dict)  # "self.attr" → how it is stored
    inlined: dict[str, str] = field(default_factory=dict)  # store → its value's text, used at the merge
    returned: ast.expr | None = None
    returned_text: str | None = None
    trailing_call: cst.Call | None = None
    trailing_call_ast: ast.Call | None = None
    # output index → (the `<helper>_if` to call, its arguments after the predicate)
    deferred: dict[int, tuple[str, list[str]]] = field(default_factory=dict)
    shields: Shields = field(default_factory=dict)  # its hazardous operations (`shield`)
    number: int = 0  # its place in the chain: its predicate is `arm_predicate(number, ...)`

    @property
    def predicate_token(self) -> str:
        """Written where this arm's predicate goes before the conditions are named (`shielded`)."""
        return f"__graphmend_predicate_{self.number}__"


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


class ArmWriter:
    """Writes one arm's statements with the arm's names, and records what the arm binds: each name's
    new name, value, kind and signature, and how it stores `self.` attributes."""

    def __init__(self, site: Site, arm: Arm, kept: set[str]) -> None:
        self.site = site
        self.arm = arm
        self.kept = kept  # temporaries of one branch that keep their own name

    def rename(self, node: cst.CSTNode) -> cst.CSTNode:
        if self.arm.shields:
            node = shielded(node, self.arm.shields, self.arm.predicate_token, self.site.torch)
        if not self.arm.mapping:
            return node
        return cast(cst.CSTNode, node.visit(_Renamer(dict(self.arm.mapping), self.site.self_name)))

    def rename_text(self, text: str) -> str:
        """An expression's text with this branch's renamings applied (so far)."""
        if not self.arm.mapping:
            return text
        return code(self.rename(cst.parse_expression(text)))

    def assign_names(
        self, stmt: ast.Assign | ast.AnnAssign, cst_stmt: cst.BaseStatement, targets: list[ast.expr]
    ) -> None:
        assert stmt.value is not None
        arm = self.arm
        small = only_small(cst_stmt)
        renamed_value = self.rename(small.value)  # type: ignore[attr-defined]
        for target in targets:
            for name in bound(target):
                if name not in arm.mapping and name not in self.kept:
                    arm.mapping[name] = self.site.ctx.fresh_name(f"{name}_{arm.suffix}")
        if isinstance(small, cst.Assign):
            new_targets = [t.with_changes(target=self.rename(t.target)) for t in small.targets]
            new_small: cst.BaseSmallStatement = small.with_changes(targets=new_targets, value=renamed_value)
        else:
            assert isinstance(small, cst.AnnAssign)
            new_small = small.with_changes(target=self.rename(small.target), value=renamed_value)
        arm.output.append(cst_stmt.with_changes(body=[new_small]))
        analysis = self.site.analysis
        kind = analysis.kind(stmt.value)
        value_signature = signature(self.site, stmt.value, arm.signatures)
        for target in targets:
            analysis._bind(target, kind, stmt.value)
            for name in bound(target):
                arm.signatures[name] = value_signature if isinstance(target, ast.Name) else None
                arm.values[name] = stmt.value if isinstance(target, ast.Name) else None  # type: ignore[assignment]

    def declare_store(self, attribute: str, buffer_keywords: str | None) -> str:
        """Record that this branch stores `self.<attribute>`; the attribute must exist before the `if`."""
        site, arm = self.site, self.arm
        key = f"{site.self_name}.{attribute}"
        store = Store(attribute, buffer_keywords)
        if arm.stores.setdefault(key, store) != store:
            raise Refused(f"a branch stores `{key}` in two different ways")
        owner = site.owner
        if owner is None or attribute not in site.analysis.module.init_values(owner):
            raise Refused(
                f"a branch stores to an attribute (`{key}`) that `__init__` does not set, so the other path would read it before it exists"
            )
        if key not in arm.mapping:
            arm.mapping[key] = site.ctx.fresh_name(f"{attribute}_{arm.suffix}")
            arm.kinds[key] = Kind.UNKNOWN
        return key

    def store(
        self, attribute: str, buffer_keywords: str | None, value: ast.expr, cst_value: cst.BaseExpression
    ) -> None:
        """A branch's store to `self.<attribute>`: its value goes to a name of the branch (or is
        used as written when it is a constant or a plain name), merged after the branches."""
        site, arm = self.site, self.arm
        key = f"{site.self_name}.{attribute}"
        known = key in arm.mapping
        self.declare_store(attribute, buffer_keywords)
        if not known:
            del arm.mapping[key]  # decided below: inlined, or a name of the branch
        renamed = self.rename(cst_value)
        stored_later = self._stored_later(value)
        if (
            key not in arm.mapping
            and not stored_later
            and (is_number(value) or isinstance(value, (ast.Name, ast.Attribute)))
        ):
            arm.inlined[key] = code(renamed)
        else:
            arm.inlined.pop(key, None)
            if key not in arm.mapping:
                arm.mapping[key] = site.ctx.fresh_name(f"{attribute}_{arm.suffix}")
            statement = cst.SimpleStatementLine(
                body=[
                    cst.Assign(
                        targets=[cst.AssignTarget(cst.Name(arm.mapping[key]))], value=cast(cst.BaseExpression, renamed)
                    )
                ]
            )
            arm.output.append(statement)
        arm.values[key] = value
        arm.kinds[key] = (
            Kind.TENSOR if buffer_keywords is not None and not _is_none(value) else site.analysis.kind(value)
        )
        arm.signatures[key] = signature(site, value, arm.signatures)

    def _stored_later(self, value: ast.expr) -> bool:
        """Whether a later statement of the branch rebinds what `value` reads (then it cannot be
        inlined at the merge, after the whole branch has run)."""
        read = names_in(value)
        body = self.arm.body
        position = next((i for i, s in enumerate(body) if any(n is value for n in walk(s))), len(body))
        for stmt in body[position + 1 :]:
            for node in walk(stmt):
                if (
                    isinstance(node, (ast.Name, ast.Attribute))
                    and isinstance(node.ctx, ast.Store)
                    and dotted(node) in read
                ):
                    return True
                if isinstance(node, ast.Call) and buffer_registration(self.site, node) is not None:
                    if f"{self.site.self_name}.{buffer_registration(self.site, node)[0]}" in read:  # type: ignore[index]
                        return True
        return False


def temporaries(site: Site, arms: list[Arm]) -> set[str]:
    """Names bound by exactly one branch, read by no other branch nor any condition, and dead
    after the `if`: they can keep their name (no merge, no rename)."""
    assigned: list[set[str]] = [
        {
            n
            for stmt in arm.body
            if isinstance(stmt, (ast.Assign, ast.AnnAssign))
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            for n in bound(t)
        }
        for arm in arms
    ]
    read: list[set[str]] = [{n.id for stmt in arm.body for n in walk(stmt) if isinstance(n, ast.Name)} for arm in arms]
    tests = {n.id for arm in arms if arm.test is not None for n in walk(arm.test) if isinstance(n, ast.Name)}
    kept: set[str] = set()
    for number, names in enumerate(assigned):
        others = [i for i in range(len(arms)) if i != number]
        for name in names:
            if name in tests or any(name in assigned[i] or name in read[i] for i in others):
                continue
            if not liveness.live_after(site.function.node, site.end, name):
                kept.add(name)
    return kept


def self_attribute(site: Site, target: ast.expr) -> str | None:
    """`self.a` → "a" (a plain attribute of the instance), else None."""
    self_name = site.self_name
    if (
        isinstance(target, ast.Attribute)
        and self_name
        and isinstance(target.value, ast.Name)
        and target.value.id == self_name
    ):
        return target.attr
    return None


def buffer_registration(site: Site, call: ast.Call) -> tuple[str, ast.expr, str] | None:
    """`self.register_buffer("name", value, persistent=...)` → (name, value, keywords text)."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute) and func.attr == "register_buffer" and self_attribute(site, func) is not None
    ):
        return None
    if len(call.args) != 2 or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    return call.args[0].value, call.args[1], ", ".join(site.ctx.segment(k) for k in call.keywords)


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def only_small(statement: cst.BaseStatement) -> cst.BaseSmallStatement:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise Refused("a line holds several statements (`;`)")
    return statement.body[0]


def is_number(expr: ast.expr | None) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return is_number(expr.operand)
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def is_name_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)


def bound(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []
