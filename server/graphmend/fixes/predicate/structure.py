"""The `if` statement in its source: where the rewrite starts and ends, its text parsed on its
own, the arms of its `elif` chain with their comments, and what stays as written."""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from ...analysis import liveness
from ..base import Refused
from .arms import Arm
from .site import Site


def following_statements(node: ast.If, function: ast.AST) -> list[ast.stmt]:
    """The statements after an `if` whose branches all return and that has no `else`: they are
    its `else` path, and the rewrite replaces them too."""
    found = liveness.locate(function, node)
    if found is None:
        raise Refused("the `if` could not be located")
    _, block, index = found
    following: list[ast.stmt] = []
    if _all_arms_return(node) and not _has_else(node):
        following = block[index + 1 :]
        if not following or not isinstance(following[-1], ast.Return):
            raise Refused("only some paths return")
    return following


def isolate(site: Site) -> tuple[str, cst.If, list[cst.BaseStatement]]:
    """The statement's indentation, its `if` parsed by LibCST from its own lines only (so the rest
    of the file is untouched byte for byte), and the following statements parsed with it."""
    indent, snippet = _snippet(site)
    module = cst.parse_module(snippet)
    cst_if = module.body[0]
    if not isinstance(cst_if, cst.If):
        raise Refused("the statement could not be isolated")
    return indent, cst_if, list(module.body[1:])


def split_arms(
    site: Site, cst_if: cst.If, following_cst: list[cst.BaseStatement], head_test: ast.expr
) -> tuple[list[Arm], list[str], list[str]]:
    """The paths through the chain, the comments of the first branch, and those of the others."""
    arms: list[Arm] = []
    comments: list[str] = []
    head_comments = 0  # how many of the collected comments belong to the first branch
    node: ast.If = site.node
    current: cst.If = cst_if
    number = 0
    while True:
        test = head_test if number == 0 else node.test
        if not site.analysis.is_data_dependent(test):
            raise Refused("an `elif` tests a Python value, not a tensor")
        suffix = "if" if number == 0 else ("elif" if number == 1 else f"elif{number}")
        comments.extend(_test_comments(current))
        comments.extend(_block_comments(current.body))
        if number == 0:
            head_comments = len(comments)
        arms.append(Arm(test, node.body, _statements(current.body), suffix, number=len(arms)))
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
            arms.append(Arm(None, node.orelse, _statements(orelse.body), "else", number=len(arms)))
        elif site.following:
            arms.append(Arm(None, site.following, following_cst, "else", number=len(arms)))
        else:
            arms.append(Arm(None, [], [], "else", number=len(arms)))
        return arms, comments[:head_comments], comments[head_comments:]


def indent_unit(site: Site) -> str:
    """One level of indentation as this statement's body uses it (spaces or a tab)."""
    first = site.ctx.source.lines[site.node.body[0].lineno - 1]
    outer = site.ctx.source.lines[site.node.lineno - 1]
    body_indent = first[: len(first) - len(first.lstrip())]
    outer_indent = outer[: len(outer) - len(outer.lstrip())]
    unit = body_indent[len(outer_indent) :] if body_indent.startswith(outer_indent) else ""
    return unit or "    "


def original_rest(site: Site) -> str:
    """What runs when the condition's Python part is false, exactly as written: the `elif`/
    `else` clauses, or the statements after an `if` whose branches all return."""
    node, following = site.node, site.following
    lines = site.ctx.source.lines
    if following:
        first = following[0].lineno - 1
        while first > (node.end_lineno or node.lineno) and not lines[first - 1].strip() == "":
            first -= 1  # comments just above the first following statement
        return "\n".join(lines[first : (following[-1].end_lineno or following[-1].lineno)])
    outer = lines[node.lineno - 1]
    indent = outer[: len(outer) - len(outer.lstrip())]
    start = node.orelse[0].lineno - 1
    while start > node.lineno - 1:
        start -= 1
        text = lines[start][len(indent) :] if lines[start].startswith(indent) else ""
        if text.startswith(("else", "elif")) and not text[4:5].isidentifier():
            break
    else:
        raise Refused("the `else` could not be located")
    return "\n".join(lines[start : (node.end_lineno or node.lineno)])


def without_comments(statement: cst.BaseStatement) -> cst.BaseStatement:
    return statement.visit(_CommentStripper())  # type: ignore[return-value]


class _CommentStripper(cst.CSTTransformer):
    """Drops every comment (a statement copied elsewhere keeps its comments only there)."""

    def leave_TrailingWhitespace(
        self, original_node: cst.TrailingWhitespace, updated_node: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        if original_node.comment is None:
            return updated_node
        return updated_node.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)

    def leave_Comment(  # type: ignore[override]  # libcst's typed stub omits RemovalSentinel
        self, original_node: cst.Comment, updated_node: cst.Comment
    ) -> cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE

    def leave_EmptyLine(
        self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine
    ) -> cst.EmptyLine | cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE if original_node.comment is not None else updated_node


def _has_else(node: ast.If) -> bool:
    current = node
    while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
        current = current.orelse[0]
    return bool(current.orelse)


def _all_arms_return(node: ast.If) -> bool:
    current: ast.If | None = node
    while current is not None:
        if not current.body or not isinstance(current.body[-1], ast.Return):
            return False
        nxt = current.orelse
        current = nxt[0] if len(nxt) == 1 and isinstance(nxt[0], ast.If) else None
    return True


class _Comments(cst.CSTVisitor):
    """Collects the comments of the nodes it visits (one class, not one made per call: a file of
    thousands of fixes)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def visit_Comment(self, node: cst.Comment) -> None:
        self.found.append(node.value)


def _test_comments(branch: cst.If) -> list[str]:
    """The comments inside a condition written over several lines (`if (\n a  # why\n and b\n):`)."""
    comments = _Comments()
    branch.test.visit(comments)
    branch.whitespace_after_test.visit(comments)
    return comments.found


def _block_comments(block: cst.BaseSuite) -> list[str]:
    found: list[str] = []
    if isinstance(block, cst.IndentedBlock):
        if block.header.comment is not None:
            found.append(block.header.comment.value)
        found.extend(line.comment.value for line in block.footer if line.comment)
    return found


def _snippet(site: Site) -> tuple[str, str]:
    lines = site.ctx.source.lines[site.node.lineno - 1 : site.last_line]
    first_line = lines[0]
    indent = first_line[: len(first_line) - len(first_line.lstrip())]
    if any(line.strip() and not line.startswith(indent) for line in lines):
        raise Refused("the statement's lines are not uniformly indented")
    return indent, "\n".join(line[len(indent) :] for line in lines) + "\n"


def _statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block (typed as such: a one-line suite holds small statements)."""
    return cast(list[cst.BaseStatement], list(suite.body))
