"""Moving statements as text: their lines with the comments above them, re-indented.

Rewrites that unwrap a block (`if m.any(): x[m] = v` → `x[m] = v`) keep the statements' own text
byte for byte apart from their indentation. A line inside a multi-line string would change its
value if re-indented, so such statements are not moved.
"""

from __future__ import annotations

import ast
import io
import tokenize
from bisect import bisect_left

from ..diagnostics import Fix, TextEdit
from ..semantics import walk
from ..source import Position, Range
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


def _position(comment: tuple[Position, str]) -> Position:
    return comment[0]


def keep_lost_comments(fix: Fix, ctx: FixContext) -> Fix:
    """The fix with every comment it would drop kept: a comment inside replaced text that no new
    text carries (a multi-line `print(...)` made one call, a conditional expression made a
    `torch.where`) goes on a line of its own above the statement it was in, at its indentation."""
    carried = "".join(edit.new_text for edit in fix.edits)
    in_order = ctx.source.comments  # in position order: each edit's are found by bisection
    inside = sorted(
        {
            index
            for edit in fix.edits
            for index in range(
                bisect_left(in_order, edit.range.start, key=_position),
                bisect_left(in_order, edit.range.end, key=_position),
            )
        }
    )
    lost: dict[int, list[str]] = {}  # 1-based first line of the statement → its lost comments
    for at, text in (in_order[index] for index in inside):
        if text in carried:
            continue
        stmt = _innermost_statement(ctx.index.tree, at.line + 1)
        if stmt is None:
            return fix
        lost.setdefault(stmt.lineno, []).append(text)
    if not lost:
        return fix
    edits = list(fix.edits)
    for line, comments in lost.items():
        start = Position(line - 1, 0)
        if any(e.range.start < start < e.range.end for e in edits):
            return fix  # the statement's line is inside a replacement: nowhere safe to put them
        indent = indent_of(ctx.source.lines[line - 1])
        block = "".join(f"{indent}{comment}\n" for comment in comments)
        same = next((i for i, e in enumerate(edits) if e.range.start == start), None)
        if same is not None:  # an edit of the whole line: the comments lead its text
            edits[same] = TextEdit(edits[same].range, block + edits[same].new_text)
        else:
            edits.append(TextEdit(Range(start, start), block))
    return Fix(fix.title, fix.applicability, tuple(sorted(edits, key=lambda e: e.range.start)), fix.hazards)


def _innermost_statement(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose lines hold `line` (1-based)."""
    found = None
    body: list[ast.stmt] = tree.body
    while True:
        holder = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if holder is None:
            return found
        found = holder
        blocks = [getattr(holder, field, []) for field in ("body", "orelse", "finalbody")]
        blocks += [part.body for part in (*getattr(holder, "handlers", []), *getattr(holder, "cases", []))]
        body = [child for block in blocks for child in block if isinstance(child, ast.stmt)]
