"""Hover on a finding: Dynamo's reason, why the code is compiled, and the fix with a preview."""

from __future__ import annotations

import re

from lsprotocol import types

from ..diagnostics import Diagnostic, TextEdit
from ..reporting import plural, qualifiers
from ..rules import RULES_BY_CODE
from .session.state import GraphmendServer, server

# Measured on torch 2.13.0 by benchmarks/nested_breaks.py (see benchmarks/README.md).
NESTED_BREAK = "In a called function it is a *nested* break: every caller is split at its call too (torch 2.13)."
# Words of prose a hover shows before anything that needs scrolling (issue 32): the action, the
# preview (code, not counted), one paragraph of why. Longer hazards go below Dynamo's link.
HAZARD_WORDS = 25
WHY_WORDS = 25


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: GraphmendServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    result = ls.current(uri)
    if result is None:
        return None
    position = ls.from_position(uri, result.lines, params.position)
    for diagnostic in result.diagnostics:
        if diagnostic.range.start <= position <= diagnostic.range.end and diagnostic.code in RULES_BY_CODE:
            return types.Hover(
                contents=types.MarkupContent(
                    kind=types.MarkupKind.Markdown, value=hover_text(diagnostic, result.lines)
                ),
                range=ls.to_range(uri, result.lines, diagnostic.range),
            )
    return None


def hover_text(diagnostic: Diagnostic, lines: list[str]) -> str:
    """The action first (the fix and its preview, or why there is none), then one paragraph of why,
    then Dynamo's page: what to do fits before anything that needs scrolling (about 80 words). An
    unsafe fix's hazards that do not fit in a line are listed last."""
    rule = RULES_BY_CODE[diagnostic.code]
    fix = diagnostic.fix
    data = diagnostic.data
    listed: list[str] = []
    if fix is not None:
        parts = [f"**Fix ({fix.applicability.value}):** {fix.title}"]
        hazard = fix.hazard
        if hazard and len(hazard.split()) <= HAZARD_WORDS:
            parts += ["", f"*May change:* {hazard}."]
        elif hazard:
            listed = list(fix.hazards)
            parts += ["", f"*May change:* {plural(len(listed), 'thing')}, listed below."]
        preview = _preview(fix.edits[-1], diagnostic.range.end.line, lines) if fix.edits else []
        if len(preview) > 8:
            preview = [*preview[:8], "..."]
        if preview:
            parts += ["```python", *_dedent(preview), "```"]
    elif "no_fix" in data:
        parts = [f"**No automatic fix:** {data['no_fix']}."]
    else:
        parts = [f"**Fix by hand:** {_first_sentences(rule.docs.fix, WHY_WORDS)}"]
    why = f"**{rule.code}** `{rule.name}`: {_first_sentences(rule.docs.why, WHY_WORDS)}"
    for qualifier in qualifiers(diagnostic):
        why += f" {qualifier[0].upper()}{qualifier[1:]}."
    if "nested" in data:
        why += " " + NESTED_BREAK
    parts += ["", why]
    if diagnostic.url:
        parts += ["", f"[Dynamo's explanation ({diagnostic.reason_id})]({diagnostic.url})"]
    if listed:
        parts += ["", "**The fix may change:**", *(f"- {item}" for item in listed)]
    return "\n".join(parts)


def _first_sentences(text: str, words: int) -> str:
    """The first sentence of `text`, and the next ones while they fit in `words` words, without
    their asides in parentheses (the rest is on the rule's page)."""
    first, *rest = re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", _without_asides(text))
    taken = [first]
    for sentence in rest:
        if sum(len(s.split()) for s in [*taken, sentence]) > words:
            break
        taken.append(sentence)
    return " ".join(taken)


def _without_asides(text: str) -> str:
    """`text` without its parenthesised asides (` (...)` outside code spans)."""
    out: list[str] = []
    depth = 0
    in_code = False
    for index, char in enumerate(text):
        if char == "`" and depth == 0:
            in_code = not in_code
        elif not in_code and char == "(" and (depth or (index > 0 and text[index - 1] == " ")):
            depth += 1
            if depth == 1:
                out.pop()  # the space before the aside
            continue
        elif depth and char == ")":
            depth -= 1
            continue
        if depth == 0:
            out.append(char)
    return "".join(out)


def _preview(edit: TextEdit, last_line: int, lines: list[str]) -> list[str]:
    """The lines the fix's last edit (the one at the finding) leaves, whole, through the finding's
    last line: a renamed call shows with its arguments."""
    start, end = edit.range.start, edit.range.end
    if max(end.line, last_line) >= len(lines):
        return edit.new_text.strip("\n").splitlines()
    text = lines[start.line][: start.character] + edit.new_text + lines[end.line][end.character :]
    return [*text.strip("\n").splitlines(), *lines[end.line + 1 : last_line + 1]]


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]
