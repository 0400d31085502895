"""Moving statements as text: their lines with the comments above them, re-indented.

Rewrites that unwrap a block (`if m.any(): x[m] = v` → `x[m] = v`) keep the statements' own text
byte for byte apart from their indentation. A line inside a multi-line string would change its
value if re-indented, so such statements are not moved.
"""

from __future__ import annotations

import ast
import io
import tokenize

from ..semantics import walk
from .base import FixContext


class Unmovable(Exception):
    """The statements cannot be re-indented without changing them."""


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def first_line(stmt: ast.stmt, ctx: FixContext) -> int:
    """The statement's first line, with the comment lines right above it (they belong to it)."""
    first = stmt.lineno
    lines = ctx.source.lines
    while first > 1 and lines[first - 2].strip().startswith("#"):
        first -= 1
    return first


def reindented(lines: list[str], statements: list[ast.stmt], ctx: FixContext, indent: str) -> list[str]:
    """`lines` (the statements' text, possibly with some statements already rewritten) moved from
    the first statement's indentation to `indent`."""
    if any(
        isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and n.lineno != n.end_lineno
        for s in statements
        for n in walk(s)
    ):
        raise Unmovable("a statement holds a multi-line string (it would change when re-indented)")
    current = indent_of(ctx.source.lines[statements[0].lineno - 1])
    moved = []
    for line in lines:
        if not line.strip():
            moved.append("")
        elif line.startswith(current):
            moved.append(indent + line[len(current) :])
        else:
            moved.append(line)  # a continuation line inside brackets: its indentation is free
    return moved


def block_text(statements: list[ast.stmt], ctx: FixContext) -> list[str]:
    """The source lines of consecutive statements, from the comments above the first one."""
    first = first_line(statements[0], ctx)
    last = statements[-1].end_lineno or statements[-1].lineno
    return ctx.source.lines[first - 1 : last]


def comments_outside(ctx: FixContext, stmt: ast.stmt, kept: list[ast.stmt]) -> list[str]:
    """The comments of `stmt`'s lines that are not on the lines of the `kept` statements (with the
    comment lines above each): when `stmt` is replaced by those statements, these must move too."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    keep: set[int] = set()
    for inner in kept:
        keep.update(range(first_line(inner, ctx), (inner.end_lineno or inner.lineno) + 1))
    text = "\n".join(ctx.source.lines[first - 1 : last]) + "\n"
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] + first - 1 not in keep:
                found.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return found
