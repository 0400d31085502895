"""Hover on a finding: Dynamo's reason, why the code is compiled, and the fix with a preview."""

from __future__ import annotations

from lsprotocol import types

from ..diagnostics import Diagnostic
from ..rules import RULES_BY_CODE
from .session.state import GraphmendServer, server
from .worker import Analysis

# Measured on torch 2.13.0 by benchmarks/nested_breaks.py (see benchmarks/README.md).
NESTED_BREAK = (
    "A break in a called function is a *nested* graph break: Dynamo resumes tracing only in the "
    "compiled frame itself, so it splits every caller at its call too, then compiles this function as "
    "a frame of its own and breaks again here. Measured on torch 2.13: a `print` costs 2 graphs in the "
    "compiled function, 4 one call down and 6 two calls down; Dynamo's log names only this line."
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
    rule = RULES_BY_CODE[diagnostic.code]
    parts = [f"**{rule.code}** `{rule.name}` — Dynamo: *{rule.reason}*", "", rule.docs.why]
    for related in diagnostic.related:
        if related.kind == "compiled":
            parts += ["", f"Compiled because: {related.message}."]
        elif related.kind == "resume":
            parts += ["", f"Line {related.range.start.line + 1}: {related.message}."]
    chain = [f"{r.message} (line {r.range.start.line + 1})" for r in diagnostic.related if r.kind == "value"]
    if chain:
        parts += ["", "Why it is a tensor: " + "; ".join(chain) + "."]
    if "nested" in diagnostic.data:
        parts += ["", NESTED_BREAK]
    if diagnostic.fix is not None:
        parts += ["", f"**Fix** ({diagnostic.fix.applicability.value}): {diagnostic.fix.title}"]
        main_edit = diagnostic.fix.edits[-1]
        preview = main_edit.new_text.strip("\n").splitlines()
        if len(preview) > 12:
            preview = [*preview[:12], "..."]
        parts += ["```python", *_dedent(preview), "```"]
    elif "no automatic fix" in diagnostic.message:
        parts += ["", f"No automatic fix: {diagnostic.data.get('no_fix', '')}"]
    else:
        parts += ["", f"Fix: {rule.docs.fix}"]
    if diagnostic.url:
        parts += ["", f"[Dynamo's explanation ({diagnostic.reason_id})]({diagnostic.url})"]
    return "\n".join(parts)


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]
