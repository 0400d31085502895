"""What a branch may do, now that it runs whether or not its condition holds.

Each statement of an arm is taken in turn: assignments and `self.` stores are renamed (`arms`),
messages (warnings, logging) and replayed calls are deferred to helpers that take the arm's
predicate, a call that ends every branch is merged later; in-place changes and other side effects
are refused, and what is allowed but rests on an assumption makes the fix unsafe.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis import hazards
from ...analysis.purity import (
    caveats,
    dotted,
    impurity,
    out_argument,
    out_write,
)
from ...messages import is_message, is_replayed
from ...semantics import ClassInfo, self_stores, walk
from ..base import Refused
from ..deferral import message_in_branch, predicated_helper
from .arms import Arm, ArmWriter, buffer_registration, code, is_name_target, only_small, self_attribute
from .gradients import state_read
from .shield import add_shields
from .site import Site


def collect(site: Site, arm: Arm, guarded: set[str], kept: set[str]) -> None:
    """Fill `arm` from its statements, with the kinds of names as they were before the `if`."""
    if len(arm.body) != len(arm.cst_body):
        raise Refused("a line holds several statements (`;`)")
    analysis = site.analysis
    saved_env, saved_visitor = analysis.env, analysis.visitor
    analysis.env, analysis.visitor = dict(site.before), None
    try:
        statements = _Statements(site, arm, guarded, kept)
        for position, (stmt, cst_stmt) in enumerate(zip(arm.body, arm.cst_body)):
            statements.take(stmt, cst_stmt, last=position == len(arm.body) - 1)
        arm.kinds = {**analysis.env, **arm.kinds}  # names, then the stores ("self.a") kept while processing
    finally:
        analysis.env, analysis.visitor = saved_env, saved_visitor


class _Statements:
    """The statements of one arm, checked and written one at a time."""

    def __init__(self, site: Site, arm: Arm, guarded: set[str], kept: set[str]) -> None:
        self.site = site
        self.arm = arm
        self.guarded = guarded  # names the conditions test
        self.writer = ArmWriter(site, arm, kept)

    def take(self, stmt: ast.stmt, cst_stmt: cst.BaseStatement, last: bool) -> None:
        arm, writer = self.arm, self.writer
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            arm.output.append(cst_stmt)
            return
        if isinstance(stmt, ast.Return):
            if not last or stmt.value is None:
                raise Refused("a branch returns early or returns nothing")
            self._check(stmt.value)
            arm.returned = stmt.value
            small = only_small(cst_stmt)
            assert isinstance(small, cst.Return) and small.value is not None
            arm.returned_text = code(writer.rename(small.value))
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            self._assignment(stmt, cst_stmt)
            return
        if isinstance(stmt, ast.If) and _is_lazy_init(stmt, self.site.self_name):
            self.site.unsafe(
                "a lazily created attribute would be created even when its branch is not taken (and under "
                "torch.compile the model compiles again on its second call: Dynamo guards on the attribute's absence)"
            )
            arm.output.append(writer.rename(cst_stmt))  # type: ignore[arg-type]
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._call(stmt, stmt.value, cst_stmt, last)
            return
        kind = type(stmt).__name__.lower()
        if isinstance(stmt, ast.AugAssign):
            raise Refused("a branch updates a value in place (augmented assignment)")
        if isinstance(stmt, ast.If):
            raise Refused("a branch contains another `if`; fix the inner one first")
        raise Refused(f"a branch contains `{kind}`")

    def _assignment(self, stmt: ast.Assign | ast.AnnAssign, cst_stmt: cst.BaseStatement) -> None:
        assert stmt.value is not None
        site, writer = self.site, self.writer
        targets: list[ast.expr] = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        unpacking = hazards.unpacking(stmt) if isinstance(stmt, ast.Assign) else None
        if unpacking is not None and unpacking.may_raise is not None:
            site.unsafe(unpacking.may_raise)
        if all(is_name_target(t) for t in targets):
            self._check(stmt.value)
            writer.assign_names(stmt, cst_stmt, targets)
            return
        if (
            len(targets) == 1
            and isinstance(targets[0], (ast.Tuple, ast.List))
            and all(is_name_target(e) or self_attribute(site, e) is not None for e in targets[0].elts)
        ):
            for element in targets[0].elts:  # `inv_freq, self.scaling = ...`: the attributes are stores
                attribute = self_attribute(site, element)
                if attribute is not None:
                    writer.declare_store(attribute, None)
            self._check(stmt.value)
            writer.assign_names(stmt, cst_stmt, targets)
            return
        if _is_idempotent_refresh(stmt):
            assert isinstance(stmt.value, ast.Call)
            self._check_arguments(stmt.value)
            self.arm.output.append(writer.rename(cst_stmt))  # type: ignore[arg-type]
            return
        attribute = self_attribute(site, targets[0]) if len(targets) == 1 and isinstance(stmt, ast.Assign) else None
        if attribute is None:
            raise Refused("a branch stores to a subscript or to an attribute of something other than `self`")
        cst_value = only_small(cst_stmt).value  # type: ignore[attr-defined]
        self._check(stmt.value)
        writer.store(attribute, None, stmt.value, cst_value)

    def _call(self, stmt: ast.Expr, call: ast.Call, cst_stmt: cst.BaseStatement, last: bool) -> None:
        """A call for its side effect: deferred (a message, a replayed call), a buffer registration,
        the call that ends the branch (merged later), or refused."""
        site, arm, writer = self.site, self.arm, self.writer
        if is_replayed(call, site.analysis):
            self._check_arguments(call)
            small = only_small(cst_stmt)
            assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            name, insertion = predicated_helper(call.func.id, site.ctx, site.torch)  # type: ignore[attr-defined]
            if insertion is not None:
                site.add_helpers([insertion])
            renamed = writer.rename(small.value)
            assert isinstance(renamed, cst.Call)
            arm.deferred[len(arm.output)] = (
                name,
                [code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in renamed.args],
            )
            return
        if is_message(call, site.analysis):
            self._check_arguments(call)
            try:
                name, arguments, edits, reasons = message_in_branch(call, site.analysis, site.ctx)
            except Refused as refusal:
                raise Refused(f"a message in a branch cannot be deferred: {refusal.reason}") from None
            site.add_helpers(edits)
            for reason in reasons:
                site.unsafe(reason)
            arm.deferred[len(arm.output)] = (name, [writer.rename_text(a) for a in arguments])
            return
        buffer = buffer_registration(site, call)
        if buffer is not None:
            name, value, keywords = buffer
            small = only_small(cst_stmt)
            assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            self._check(value)
            writer.store(name, keywords, value, small.value.args[1].value)
            return
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
            raise Refused(f"a branch changes a tensor in place (`.{func.attr}`)")
        written = out_argument(call)
        if written is not None:
            raise Refused(out_write(written))
        if last or self._next_is_return(stmt):
            self._check_arguments(call)
            small = only_small(cst_stmt)
            assert isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            arm.trailing_call = writer.rename(small.value)  # type: ignore[assignment]
            arm.trailing_call_ast = call
            return
        raise Refused(f"a branch calls `{dotted(call.func) or 'a function'}` for its side effect")

    def _next_is_return(self, stmt: ast.stmt) -> bool:
        index = self.arm.body.index(stmt)
        return index == len(self.arm.body) - 2 and isinstance(self.arm.body[-1], ast.Return)

    def _check_arguments(self, call: ast.Call) -> None:
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            self._check(argument)

    def _check(self, expr: ast.expr) -> None:
        reason = impurity(expr, self.site.analysis, self.guarded)
        if reason is not None:
            raise Refused(reason)
        missing = unset_attribute(expr, self.site)
        if missing is not None:
            raise Refused(
                f"a branch reads `{missing}`, which nothing in its class sets: run on every call, the rewrite would "
                "raise AttributeError where the original raised only when the branch ran"
            )
        for assumption in caveats([expr], self.site.analysis):
            self.site.unsafe(assumption)
        for hazard in state_read(expr, self.site.analysis):
            self.site.unsafe(hazard)
        self._shield(expr)

    def _shield(self, expr: ast.expr) -> None:
        """Each operation of `expr` that may give inf/NaN or raise on the values the condition
        excluded: shielded where it can be, refused where not (`shield.add_shields`)."""
        site = self.site
        for reason in add_shields(self.arm.shields, expr, site.scalar_conditions, site.analysis, site.ctx.segment):
            site.unsafe(reason)


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
    attribute = f"{self_name}.{call.args[1].value!s}"
    for body_stmt in stmt.body:
        if not isinstance(body_stmt, ast.Assign):
            return False
        stored = [dotted(e) for t in body_stmt.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
        if attribute not in stored:
            return False
    return True


# What an nn.Module instance has without its class setting it: torch.nn.Module's public methods and
# attributes (torch 2.13; a name starting with `_` is never judged).
_MODULE_NAMES = frozenset(
    """T_destination add_module apply bfloat16 buffers call_super_init children compile cpu cuda double
    dump_patches eval extra_repr float forward get_buffer get_extra_state get_parameter get_submodule half
    ipu load_state_dict modules mtia named_buffers named_children named_modules named_parameters parameters
    register_backward_hook register_buffer register_forward_hook register_forward_pre_hook
    register_full_backward_hook register_full_backward_pre_hook register_load_state_dict_post_hook
    register_load_state_dict_pre_hook register_module register_parameter register_state_dict_post_hook
    register_state_dict_pre_hook requires_grad_ set_extra_state set_submodule share_memory state_dict to
    to_empty train training type xpu zero_grad""".split()
)
_DYNAMIC = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__init_subclass__"})
_NN_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def unset_attribute(expr: ast.expr, site: Site) -> str | None:
    """A `self.<name>` that `expr` reads and that nothing can have set: the class and its bases are
    all in the file (or torch's nn.Module), none defines it in its body or stores it (`self_stores`),
    none sets attributes dynamically (`setattr`, `__getattr__`, `__dict__`). Qwen2.5-VL's rope update
    reads `self.rope_kwargs`, which its `__init__` never sets: the original raises only when the
    sequence grows, a rewrite running the branch always would raise on every call."""
    owner = site.owner
    if owner is None or site.self_name is None:
        return None
    for node in walk(expr):
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == site.self_name
            and not node.attr.startswith("_")
            and node.attr not in _MODULE_NAMES
        ):
            continue
        if _may_have(owner, node.attr):
            continue
        return f"{site.self_name}.{node.attr}"
    return None


def _may_have(owner: ClassInfo, attribute: str) -> bool:
    for cls in owner.mro():
        known = {base.name for base in cls.bases}
        if any(name is None or (name not in known and name not in _NN_MODULE) for name in cls.base_names):
            return True  # a base graphmend cannot see may set it
        if attribute in cls.methods or _DYNAMIC & cls.methods.keys() or _in_class_body(cls.node, attribute):
            return True
        for node in walk(cls.node):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                return True
            if isinstance(node, ast.Attribute) and node.attr == "__dict__":
                return True
    return next(self_stores(owner, attribute), None) is not None


def _in_class_body(node: ast.ClassDef, attribute: str) -> bool:
    for stmt in node.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == attribute for t in targets):
            return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == attribute:
            return True
    return False
