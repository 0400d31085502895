"""The rewrite of a data-dependent conditional expression: `a if cond else b` → `torch.where(cond, a, b)`
(`exact_where`'s helper where the two tensors may differ in shape or dtype)."""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis import conditions, liveness
from ...analysis.purity import caveats, evaluated_always, impurity, names_in
from ...analysis.shapes import elementwise_bases, is_scalar_condition
from ...diagnostics import Fix, TextEdit
from ...inference import FunctionAnalysis
from ...semantics import statement_of, walk
from ..base import FixContext, Refusal, Refused, zero_gradients
from ..exact_where import exact_where, script_hazard
from . import identity
from .arms import code
from .condition import floating_names, reordered_operand
from .gradient_flow import gradient_free
from .gradients import layout_hazard, one_path_gradients, state_read
from .merge import require_mergeable
from .render import offer
from .shield import Shields, add_shields, shielded
from .signatures import dtype_difference, ordered_names, unproven_finfo


def predicate_ternary(node: ast.IfExp, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """`a if cond else b` → `torch.where(cond, a, b)`; a Python part of `cond` stays a Python
    conditional: `a if flag and t.any() else b` → `(torch.where(t.any(), a, b) if flag else b)`."""
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal(ctx.no_torch_name)
    split = conditions.split(node.test, analysis)
    guarded = names_in(split.rest)
    for part in (split.rest, node.body, node.orelse):
        reason = impurity(part, analysis, guarded, condition=part is split.rest)
        if reason is not None:
            return Refusal(reason.replace("a branch", "an operand"))
    reasons = caveats([split.rest, node.body, node.orelse], analysis, frozenset(evaluated_always(split.rest)))
    reasons += [reordered_operand(operand) for operand in split.reordered]
    statement = statement_of(node, analysis.function.node) if analysis.function is not None else None
    if statement is not None and analysis.function is not None:
        both = ast.Module(body=[ast.Expr(node.body), ast.Expr(node.orelse)], type_ignores=[])
        reasons += [
            liveness.unbound_words(name) for name in liveness.unbound_reads(analysis.function.node, statement, both)
        ]
    try:
        require_mergeable(
            ["the true value", "the false value"],
            [analysis.kind(node.body), analysis.kind(node.orelse)],
            [node.body, node.orelse],
            reasons,
        )
        condition = conditions.tensor_logic(split.rest, analysis, ctx.segment, torch_name)
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)
    scalar = is_scalar_condition(split.rest, analysis)
    try:
        body = _operand_text(node.body, ctx, _shields(node.body, scalar, analysis, ctx, reasons), condition, torch_name)
        negation = f"~({condition})" if " " in condition else f"~{condition}"
        orelse = _operand_text(
            node.orelse, ctx, _shields(node.orelse, scalar, analysis, ctx, reasons), negation, torch_name
        )
    except Refused as refusal:
        return Refusal(refusal.reason)
    signatures = {elementwise_bases(v, analysis) for v in (node.body, node.orelse)}
    difference = (
        dtype_difference(signatures)
        or "the two values may differ in shape or dtype (torch.where broadcasts and promotes)"
        if None in signatures or len(signatures) != 1
        else None
    )
    definitions: list[TextEdit] = []
    helper = (  # shapes, dtypes, devices and strides alike, for tensor values
        exact_where(ctx, torch_name, definitions.append)
        if all(analysis.kind(v).is_tensor for v in (node.body, node.orelse))
        else None
    )
    if helper is not None and analysis.function is not None:
        scripted = script_hazard(analysis.function.node, analysis.qualified_name)
        if scripted is not None:
            reasons.append(scripted)
    text = f"{helper or f'{torch_name}.where'}({condition}, {body}, {orelse})"
    if split.static:
        text = f"{text} if {conditions.static_text(split.static, ctx.segment)} else {_operand_text(node.orelse, ctx)}"  # in the place of a conditional expression
    typed = [name for name in analysis.caller_typed if name in names_in(split.rest)]
    typed += conditions.annotation_claims(split.rest, analysis)
    if typed:  # tensors from some callers (or by annotation only), numbers from others: the original stays for numbers
        tests = " or ".join(f"isinstance({name}, {torch_name}.Tensor)" for name in typed)
        text = f"({text}) if {tests} else ({ctx.segment(node)})"
    edits = [*definitions, TextEdit(ctx.source.node_range(node), text)]
    reasons.extend(r for r in _gradients(node, analysis) if r not in reasons)
    if not scalar:
        reasons.append("the condition may have more than one element")
    if helper is None and difference is not None:  # a notebook's cells: plain torch.where
        reasons.append(difference)
    floating = floating_names(split.static, analysis)
    reasons.extend(unproven_finfo([node.body, node.orelse], analysis, floating.__contains__, ordered_names(split.rest)))
    return offer(tuple(edits), reasons)


def _gradients(node: ast.IfExp, analysis: FunctionAnalysis) -> list[str]:
    """What selecting between both values changes for gradients and identity (`gradients`): module
    state one value reads, a tensor only one reads, and the caller's own tensor given back by one."""
    function = analysis.function
    if function is None:
        return []
    hazards = [*state_read(node.body, analysis), *state_read(node.orelse, analysis)]
    inside = {id(n) for n in walk(node)}
    paths = [[node.body], [node.orelse]]
    hazards.extend(one_path_gradients(function, analysis, dict(analysis.env), paths, True, inside))
    layout = layout_hazard("the selected value", [node.body, node.orelse])
    if layout is not None:
        hazards.append(layout)
    statement = statement_of(node, function.node)
    escapes = statement is not None and _value_escapes(node, function.node)
    if statement is not None and escapes:  # review 12: `h.exp() if ... else h + 2`
        saved = (identity.saved_output(operand, analysis, statement) for operand in (node.body, node.orelse))
        call = next((found for found in saved if found is not None), None)
        if call is not None:
            hazards.append(identity.saved_words("the selected value", call))
    constant = [gradient_free(operand, analysis) for operand in (node.body, node.orelse)]
    if any(constant) and not all(constant):  # review 12: `zeros_like(h) if ... else h + 2`
        hazards.append(zero_gradients("where one value has no gradient, the tensors the other uses"))
    if statement is not None and escapes:
        for operand in (node.body, node.orelse):
            read_after = (
                {operand.id}
                if isinstance(operand, ast.Name) and liveness.live_after(function.node, statement, operand.id)
                else set()
            )
            shared = identity.shared_with(operand, "the selected value", read_after)
            held = identity.held_elsewhere(operand, analysis, statement)
            if shared is not None or held is not None:
                hazards.append(shared or identity.identity_words("the selected value", held or ""))
                break
    return hazards


def _value_escapes(node: ast.IfExp, function: ast.AST) -> bool:
    """The conditional expression is what a statement returns or binds as it is (not an operand of
    something else): the object it gives may reach the caller."""
    return any(
        isinstance(stmt, (ast.Return, ast.Assign, ast.AnnAssign)) and stmt.value is node for stmt in walk(function)
    )


def _shields(expr: ast.expr, scalar: bool, analysis: FunctionAnalysis, ctx: FixContext, reasons: list[str]) -> Shields:
    """The hazardous operations of one operand, now evaluated whatever the condition (`shield`);
    what makes the fix unsafe goes into `reasons`."""
    shields: Shields = {}
    reasons.extend(r for r in add_shields(shields, expr, scalar, analysis, ctx.segment) if r not in reasons)
    return shields


def _operand_text(
    expr: ast.expr, ctx: FixContext, shields: Shields | None = None, predicate: str = "", torch_name: str = ""
) -> str:
    text = ctx.segment(expr)
    if shields:  # the operand's hazardous operations see a safe value where `predicate` is false
        text = code(shielded(cst.parse_expression(text), shields, predicate, torch_name))
    return f"({text})" if isinstance(expr, (ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text else text
