"""Hover on a finding: Dynamo's reason, why the code is compiled, and the fix with a preview."""

from __future__ import annotations

import re

from lsprotocol import types

from ..diagnostics import Diagnostic
from ..reporting import qualifiers
from ..rules import RULES_BY_CODE
from .session.state import GraphmendServer, server
from .worker import Analysis

# Measured on torch 2.13.0 by benchmarks/nested_breaks.py (see benchmarks/README.md).
NESTED_BREAK = (
    "In a called function it is a *nested* break: every caller is split at its call too (a `print` costs "
    "2 graphs in the compiled function, 4 one call down, 6 two calls down; torch 2.13)."
)


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
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=_hover_text(diagnostic, result)),
                range=ls.to_range(uri, result.lines, diagnostic.range),
            )
    return None


def _hover_text(diagnostic: Diagnostic, result: Analysis) -> str:
    """The action first (the fix and its preview, or why there is none), then one paragraph of why,
    then Dynamo's page: what to do fits before anything that needs scrolling."""
    rule = RULES_BY_CODE[diagnostic.code]
    fix = diagnostic.fix
    data = diagnostic.data
    if fix is not None:
        parts = [f"**Fix ({fix.applicability.value}):** {fix.short_title}"]
        if fix.hazard:
            parts += ["", f"*May change:* {fix.hazard}."]
        preview = fix.edits[-1].new_text.strip("\n").splitlines() if fix.edits else []
        if len(preview) > 8:
            preview = [*preview[:8], "..."]
        if preview:
            parts += ["```python", *_dedent(preview), "```"]
    elif "no_fix" in data:
        parts = [f"**No automatic fix:** {data['no_fix']}."]
    else:
        parts = [f"**Fix by hand:** {rule.docs.fix}"]
    why = f"**{rule.code}** `{rule.name}`: {_first_sentences(rule.docs.why, 40)}"
    for qualifier in qualifiers(diagnostic):
        why += f" {qualifier[0].upper()}{qualifier[1:]}."
    if "nested" in data:
        why += " " + NESTED_BREAK
    parts += ["", why]
    if diagnostic.url:
        parts += ["", f"[Dynamo's explanation ({diagnostic.reason_id})]({diagnostic.url})"]
    return "\n".join(parts)


def _first_sentences(text: str, words: int) -> str:
    """The sentences of `text` up to about `words` words (the rest is on the rule's page)."""
    taken: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", text):
        taken.append(sentence)
        if sum(len(s.split()) for s in taken) >= words:
            break
    return " ".join(taken)


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]
