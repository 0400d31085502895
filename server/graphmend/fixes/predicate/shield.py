"""Shielding a hazardous operation of a branch (`analysis.hazards`): where the branch does not run,
the operation gets a value inside its domain instead of the one the condition excluded.

`num / den` → `num / torch.where(P, den, 1)`, P the branch's predicate: where P holds the selection
passes `den` and its gradient unchanged; where it does not, the division sees 1, so neither the
discarded value nor its gradient is inf or NaN (torch.where's backward multiplies the zero
gradient of the discarded side by the operation's derivative: 0 × inf = NaN). A Python number
keeps the operand's dtype (it does not promote a tensor of its own category); a bool operand,
which it would promote, gets `torch.ones_like(den)` instead.
"""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from ...analysis.conditions import Segment
from ...analysis.hazards import hazards, shieldable
from ...inference import FunctionAnalysis
from ...kinds import Kind
from ..base import Refused

# the text of a hazardous operation → the text of its operand to shield, and the safe value (a
# number, or "ones_like"/"zeros_like" for a bool operand)
Shields = dict[str, tuple[str, str]]


def add_shields(
    shields: Shields, expr: ast.expr, scalar: bool, analysis: FunctionAnalysis, segment: Segment
) -> list[str]:
    """Record each hazardous operation of `expr` (now run whatever the condition) by the source
    text of the operation and its operand; raise `Refused` for one that raises, or that cannot be
    shielded (`scalar`: the condition is one element): no rewrite may write NaN into gradients.
    Returns what makes the fix unsafe: an operation that raises if a dtype graphmend does not know
    is bool."""
    unsafe: list[str] = []
    for hazard in hazards(expr, analysis):
        if hazard.raises is not None:
            raise Refused(hazard.raises)
        if hazard.named is not None:
            unsafe.append(hazard.named)
            continue
        if hazard.no_derivative is not None:
            unsafe.append(hazard.no_derivative)  # and shielded below: the values stay finite
        if not (scalar and shieldable(hazard, analysis)):
            if hazard.overflow:
                unsafe.append(hazard.words())
                continue
            raise Refused(hazard.words())
        assert hazard.operand is not None and hazard.safe is not None
        safe = hazard.safe
        if analysis.kind(hazard.operand).present is Kind.BOOL_TENSOR:
            safe = "ones_like" if safe == "1" else "zeros_like"
        shields[segment(hazard.node)] = (segment(hazard.operand), safe)
    return unsafe


def shielded(node: cst.CSTNode, shields: Shields, predicate: str, torch_name: str) -> cst.CSTNode:
    """`node` with the operand of each of its shielded operations selected by `predicate`."""
    return cast(cst.CSTNode, node.visit(_Shield(shields, predicate, torch_name)))


class _Shield(cst.CSTTransformer):
    def __init__(self, shields: Shields, predicate: str, torch_name: str) -> None:
        self.shields = shields
        self.predicate = predicate
        self.torch = torch_name

    def _shielded(
        self, original: cst.BaseExpression, operand: cst.BaseExpression, updated: cst.BaseExpression
    ) -> cst.BaseExpression | None:
        """`updated` (the operand, its own operations shielded) selected, when `original` is a
        shielded operation on `operand`."""
        found = self.shields.get(_bare(original))
        if found is None or _bare(operand) != found[0]:
            return None
        text, safe = _bare(updated), found[1]
        value = f"{self.torch}.{safe}({text})" if safe.endswith("_like") else safe
        return cst.parse_expression(f"{self.torch}.where({self.predicate}, {text}, {value})")

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        for side in ("right", "left"):
            wrapped = self._shielded(original_node, getattr(original_node, side), getattr(updated_node, side))
            if wrapped is not None:
                return updated_node.with_changes(**{side: wrapped})
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func, updated_func = original_node.func, updated_node.func
        if isinstance(func, cst.Attribute) and isinstance(updated_func, cst.Attribute):
            wrapped = self._shielded(original_node, func.value, updated_func.value)
            if wrapped is not None:
                return updated_node.with_changes(func=updated_func.with_changes(value=wrapped))
        for position, (argument, updated) in enumerate(zip(original_node.args, updated_node.args)):
            wrapped = self._shielded(original_node, argument.value, updated.value)
            if wrapped is not None:
                arguments = list(updated_node.args)
                arguments[position] = updated.with_changes(value=wrapped)
                return updated_node.with_changes(args=arguments)
        return updated_node


def _bare(node: cst.BaseExpression) -> str:
    """The node's text without its own parentheses (as `ast` gives an expression's text)."""
    return cst.Module(body=[]).code_for_node(node.with_changes(lpar=[], rpar=[]))
