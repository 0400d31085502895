"""The rewrite's text: the branches' statements as lines, placed where the `if` was (under a
Python `if` for the condition's Python part), and the fix offering it."""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from ...analysis import conditions
from ...diagnostics import Applicability, Fix, TextEdit
from .arms import Arm
from .site import Site
from .structure import indent_unit, original_rest

TITLE = "Compute both branches and select with `torch.where`"


def offer(edits: tuple[TextEdit, ...], reasons: list[str]) -> Fix:
    """The fix, unsafe with its reasons when there are any."""
    if reasons:
        return Fix(TITLE, Applicability.UNSAFE, edits, tuple(reasons))
    return Fix(TITLE, Applicability.SAFE, edits)


def comment_lines(comments: list[str]) -> list[str]:
    """The branches' comments, moved above the rewrite."""
    return [f"# {c.lstrip('#').strip()}" if c else "" for c in comments]


def render_arm(arm: Arm, predicate: str) -> list[str]:
    """The arm's statements as lines; its deferred calls carry the arm's predicate."""
    lines: list[str] = []
    pending: list[cst.BaseStatement] = []

    def flush() -> None:
        if pending:
            statements = cast(list[cst.SimpleStatementLine | cst.BaseCompoundStatement], list(pending))
            lines.extend(cst.Module(body=statements).code.rstrip("\n").split("\n"))
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


def place(site: Site, lines: list[str], indent: str, static: tuple[ast.expr, ...]) -> str:
    """The lines at the statement's indentation; with a Python part of the condition, inside an
    `if` on it, followed by what runs when it is false, as written."""
    if not static:
        return _indented(lines, indent)
    body = _indented(lines, indent + indent_unit(site))
    text = f"{indent}if {conditions.static_text(static, site.ctx.segment)}:\n{body}"
    if site.node.orelse or site.following:
        text += "\n" + original_rest(site)
    return text


def _indented(lines: list[str], indent: str) -> str:
    return "\n".join((indent + line) if line.strip() else "" for line in lines)
