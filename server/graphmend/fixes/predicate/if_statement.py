"""The rewrite of a data-dependent `if` statement, step by step: isolate it, collect and check its
arms, name its conditions, then write the branches one after the other and merge what they bind."""

from __future__ import annotations

import ast
from functools import partial

from ...analysis import conditions, liveness
from ...analysis.purity import assigned_once, names_in
from ...analysis.shapes import is_scalar_condition
from ...diagnostics import Fix, TextEdit
from ...inference import FunctionAnalysis
from ...kinds import Kind
from ...semantics import walk
from ..base import FixContext, Refusal, Refused
from .arms import Arm, temporaries
from .condition import arm_predicate, floating_names, name_conditions, reordered_operand
from .effects import collect
from .gradients import one_path_gradients
from .merge import merges
from .render import comment_lines, offer, place, render_arm
from .signatures import floating_before, ordered_names, unproven_finfo
from .site import Site
from .structure import following_statements, isolate, split_arms, without_comments
from .surroundings import check_surroundings


def predicate_if(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        return _predicate(node, analysis, ctx)
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)


def _predicate(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix:
    before = dict(analysis.env)
    function = analysis.function
    if function is None:
        raise Refused("the `if` is not inside a function")
    torch_name = ctx.torch_name
    if torch_name is None:
        raise Refused(ctx.no_torch_name)
    following = following_statements(node, function.node)
    split = conditions.split(node.test, analysis)
    site = Site(node, analysis, ctx, function, torch_name, before, following, floating_names(split.static, analysis))
    for operand in split.reordered:
        site.unsafe(reordered_operand(operand))
    for name in liveness.unbound_reads(
        function.node, node, ast.Module(body=[*node.body, *node.orelse], type_ignores=[])
    ):
        site.unsafe(liveness.unbound_words(name))
    _saved_for_backward(site, node)
    indent, cst_if, following_cst = isolate(site)
    arms, comments, later_comments = split_arms(site, cst_if, following_cst, split.rest)
    if split.static:
        # The paths after the first stay as written under the Python part's `else`, comments
        # and all: their copies in the rewrite carry none, so no comment appears twice.
        for arm in arms[1:]:
            arm.cst_body = [without_comments(s) for s in arm.cst_body]
    else:
        comments = comments + later_comments
    guarded: set[str] = set()
    for arm in arms:
        if arm.test is not None:
            guarded |= names_in(arm.test)
    guarded |= _tested_through_masks(guarded, analysis)
    kept = temporaries(site, arms)
    site.scalar_conditions = all(is_scalar_condition(arm.test, analysis) for arm in arms if arm.test is not None)
    for arm in arms:
        collect(site, arm, guarded, kept)
    _require_frame_local(site, arms)
    _passed_in_gradients(site, arms)
    _finfo_in_branches(site, arms)
    returns = [arm.returned is not None for arm in arms]
    if any(returns) and not all(returns):
        raise Refused("only some paths return")
    lines = comment_lines(comments)
    condition_names = name_conditions(site, arms, lines)
    for number, arm in enumerate(arms):
        lines.extend(render_arm(arm, arm_predicate(number, condition_names)))
    lines.extend(merges(site, arms, condition_names))
    check_surroundings(site, arms)
    text = place(site, lines, indent, split.static)
    for arm in arms:  # the shields' predicates, now that the conditions have names
        text = text.replace(arm.predicate_token, arm_predicate(arm.number, condition_names))
    return offer((*site.helper_edits, TextEdit(ctx.line_range(node.lineno, site.last_line), text)), site.unsafe_reasons)


def _tested_through_masks(guarded: set[str], analysis: FunctionAnalysis) -> set[str]:
    """What a tested mask was computed from (`valid = idx < n; if valid.all():` tests `idx`): an
    index it validates is as guarded as one the condition compares itself (issue 67, review 6)."""
    found: set[str] = set()
    for name in guarded:
        value = assigned_once(name, analysis)
        if value is not None and any(isinstance(n, ast.Compare) for n in walk(value)):
            found |= names_in(value)
    return found


def _require_frame_local(site: Site, arms: list[Arm]) -> None:
    """A name the branches bind that others read outside this frame: declared `global` or
    `nonlocal`, or read by a function or lambda defined inside it (a closure's cell). Who reads it
    after the `if` is not in these statements, so the merge cannot be proven to give it every value
    it had: refused (issue 67, review 5: a global assigned on every call)."""
    node = site.function.node
    frame_read = _frame_reader(node)
    if frame_read is not None:
        raise Refused(f"the function reads its own frame ({frame_read}): the rewrite's new names and values would show")
    declared = {n for s in walk(node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
    captured: set[str] = set()
    for inner in walk(node):
        if inner is not node and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            captured |= {n.id for n in walk(inner) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for arm in arms:
        assigned = {n.id for s in arm.body for n in walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for name in sorted(assigned):
            if name in declared:
                raise Refused(
                    f"a branch assigns `{name}`, declared `global` or `nonlocal`: code outside this function reads it"
                )
            if name in captured:
                raise Refused(f"a branch assigns `{name}`, which a function defined here reads when it is called")


# Calls that hand a frame's own names to the program: `locals()`, `vars()`, the frame object.
_FRAME_BUILTINS = frozenset({"locals", "vars"})
_FRAME_FUNCTIONS = frozenset({"_getframe", "currentframe"})


def _frame_reader(function: ast.AST) -> str | None:
    """`locals()` (or `vars()`, `sys._getframe()`, `inspect.currentframe()`) called in `function`."""
    for call in walk(function):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if (isinstance(func, ast.Name) and func.id in _FRAME_BUILTINS and not call.args) or (
            isinstance(func, ast.Attribute) and func.attr in _FRAME_FUNCTIONS
        ):
            return f"`{ast.unparse(func)}()`"
    return None


def _passed_in_gradients(site: Site, arms: list[Arm]) -> None:
    """A tensor only some paths read (`gradients.one_path_gradients`): where the original took
    another path no gradient reached it, and now a zero one does."""
    inside = {id(n) for n in walk(site.node)} | {id(n) for s in site.following for n in walk(s)}
    paths = [arm.body for arm in arms]
    for hazard in one_path_gradients(site.function, site.analysis, site.before, paths, arms[-1].test is None, inside):
        site.unsafe(hazard)


def _finfo_in_branches(site: Site, arms: list[Arm]) -> None:
    """`torch.finfo(x.dtype)` in a branch, where `x` is not proven floating point as it is before
    the `if` (or is rebound earlier in the branch): the fix is unsafe, the raise named."""
    real = frozenset().union(*(ordered_names(arm.test) for arm in arms[:1] if arm.test is not None))
    for arm in arms:
        rebound: frozenset[str] = frozenset()
        for stmt in arm.body:
            floating = partial(_floating_unless_rebound, site, rebound)
            for words in unproven_finfo([stmt], site.analysis, floating, real - rebound):
                site.unsafe(words)
            rebound |= {n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _floating_unless_rebound(site: Site, rebound: frozenset[str], name: str) -> bool:
    return name not in rebound and floating_before(site, name)


def _saved_for_backward(site: Site, node: ast.If) -> None:
    """A branch that computes with the caller's tensor (`x.clamp(min=0)`, `x.exp()`) now records
    that computation on every call: where `x` requires grad, autograd saves it for backward there
    too, so an in-place change of the caller's `x` before backward raises where it did not (review
    9). Named for each such tensor a branch reads."""
    rebound = {n.id for n in walk(site.function.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    callers = set(site.function.parameter_names) - rebound - {"self", "cls"}  # the caller's own objects
    operands = {
        operand.id
        for stmt in [*node.body, *node.orelse]
        for op in walk(stmt)
        for operand in _saved_operands(op)
        if isinstance(operand, ast.Name)
    }
    for name in sorted(operands & callers):
        kind = site.analysis.kind(ast.Name(id=name, ctx=ast.Load()))
        if kind.is_tensor or kind is Kind.UNKNOWN:
            site.unsafe(
                f"the rewrite computes with the caller's `{name}` also where the branch did not run: where it requires "
                "grad, autograd saves it for backward there too, so an in-place change of it before backward raises "
                '("modified by an inplace operation")'
            )


# Methods whose backward needs no input of theirs (a shape, or their own result): the caller's tensor
# is not saved by them.
_SAVE_NO_INPUT = frozenset(
    "exp tanh sigmoid relu view reshape flatten clone detach contiguous float double half bfloat16 to sum mean "
    "neg t transpose permute unsqueeze squeeze expand expand_as view_as reshape_as type_as".split()
)


def _saved_operands(op: ast.AST) -> tuple[ast.expr, ...]:
    """The operands whose value `op`'s backward keeps (`x` of `x.clamp(...)`, of `x * w`): not of a
    sum or difference, nor of a product by a number, whose backward needs none."""
    if isinstance(op, ast.BinOp):
        if isinstance(op.op, (ast.Add, ast.Sub)):
            return ()
        if isinstance(op.op, (ast.Mult, ast.Div)) and any(
            isinstance(side, ast.Constant) for side in (op.left, op.right)
        ):
            return ()
        return (op.left, op.right)
    if isinstance(op, ast.Call) and isinstance(op.func, ast.Attribute) and op.func.attr not in _SAVE_NO_INPUT:
        return (op.func.value,)
    return ()
