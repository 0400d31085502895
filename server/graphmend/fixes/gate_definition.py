"""The skip condition of a loop gate, written: `flag = <bool tensor>` where a tensor decides whether
the layer is skipped, None where Python alone does (`gate_recognition` finds where it goes)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis import conditions
from ..analysis.purity import impurity
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..source import Position, Range
from .base import FixContext, Refused
from .text import comments_outside, indent_of


@dataclass(frozen=True)
class Definition:
    """The gate's definition: its flag, the edits that write it at its site, the statement alone (for
    a form that writes it in front of an unwrapped branch), and whether the flag may be None."""

    flag: str
    edits: tuple[TextEdit, ...]
    text: str
    may_be_none: bool


def define(
    skip: ast.expr,
    site: ast.stmt,
    outer: ast.If | None,
    flag: str | None,
    analysis: FunctionAnalysis,
    ctx: FixContext,
    torch: str,
    replace_value: bool,
) -> Definition:
    """Write the gate: `flag = <bool tensor>` where the tensor decides, None where Python does.

    `site` is the statement that decides today (the `if`, or the flag's assignment); `outer`,
    a Python `if` around it, after which the flag would otherwise be unbound; `flag`, the code's
    own flag, or None for a fresh one (named once the condition is found rewritable, and defined as
    None before `outer`); `replace_value`, only the value of the flag's assignment at `site` is replaced.
    """
    split = conditions.split(skip, analysis)
    if not analysis.is_data_dependent(split.rest):
        raise Refused("the skip condition does not test a tensor")
    reason = impurity(split.rest, analysis, set(), condition=True)
    if reason is not None:
        raise Refused(reason.replace("a branch", "the condition"))
    fresh = flag is None
    flag = ctx.fresh_name("skip_layer") if flag is None else flag
    tensor = conditions.tensor_logic(split.rest, analysis, ctx.segment, torch)
    static = " and ".join(operand_text(e, ctx) for e in split.static)
    shown = f"({tensor})" if static and not tensor.isidentifier() else tensor
    value = f"{shown} if {static} else None" if static else tensor
    may_be_none = bool(static) or outer is not None
    definition = f"{flag} = {value}"
    if replace_value:
        assert isinstance(site, ast.Assign)
        return Definition(flag, (TextEdit(ctx.source.node_range(site.value), value),), definition, may_be_none)
    indent = indent_of(ctx.source.lines[site.lineno - 1])
    comments = comments_outside(ctx, site, [])  # the last one stays at the end of the line
    lines = [indent + c for c in comments[:-1]] + [f"{indent}{definition}" + (f"  {comments[-1]}" if comments else "")]
    edits = []
    if outer is not None and fresh:
        outer_indent = indent_of(ctx.source.lines[outer.lineno - 1])
        start = Position(outer.lineno - 1, 0)
        edits.append(TextEdit(Range(start, start), f"{outer_indent}{flag} = None\n"))
    edits.append(TextEdit(ctx.line_range(site.lineno, site.end_lineno or site.lineno), "\n".join(lines)))
    return Definition(flag, tuple(edits), definition, may_be_none)


def operand_text(expr: ast.expr, ctx: FixContext) -> str:
    """A Python condition's text as an operand of `and`/`or`: parenthesised where it would not bind."""
    text = conditions.python_text(expr, ctx.segment)
    return f"({text})" if isinstance(expr, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text else text
