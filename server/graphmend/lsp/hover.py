"""Hover on a finding: what to do (the fix with a preview, or what to do by hand), why, then
Dynamo's own words for the break and its page."""

from __future__ import annotations

import re
from dataclasses import replace

from lsprotocol import types

from ..api import (
    OFF_BY_DEFAULT,
    RULES_BY_CODE,
    Diagnostic,
    FindingData,
    TextEdit,
    is_recorded,
    plural,
    proof_sentence,
    qualifiers,
    without_asides,
)
from .session.state import GraphmendServer, server

# Measured on torch 2.13.0 by benchmarks/nested_breaks.py (see benchmarks/README.md).
NESTED_BREAK = "In a called function it is a *nested* break: each caller splits at its call too (torch 2.13)."
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
    """The action first (the fix and its preview; without one, what to do by hand or why it can be
    left), then one paragraph of why, then Dynamo's words and page: what to do fits before anything
    that needs scrolling (about 80 words). Long hazards of an unsafe fix, and a long reason why
    there is no fix, come last."""
    rule = RULES_BY_CODE[diagnostic.code]
    fix = diagnostic.fix
    data = _plain_values(diagnostic.data)
    diagnostic = replace(diagnostic, data=data)
    below: list[str] = []
    if fix is not None:
        parts = [f"**Fix ({fix.applicability.value}):** {fix.title}"]
        if data.proof is not None:  # what the user's own run showed comes before what may happen
            parts += ["", f"*{_capitalized(proof_sentence(data.proof))}.*"]
        hazard = fix.hazard
        if hazard and len(hazard.split()) <= HAZARD_WORDS:
            parts += ["", f"*May change:* {hazard}."]
        elif hazard:
            below = ["**The fix may change:**", *(f"- {item}" for item in fix.hazards)]
            parts += ["", f"*May change:* {plural(len(fix.hazards), 'thing')}, listed below."]
        preview = _preview(fix.edits[-1], diagnostic.range.end.line, lines) if fix.edits else []
        if len(preview) > 8:
            preview = [*preview[:8], "..."]
        if preview:
            parts += ["```python", *_dedent(preview), "```"]
    else:
        parts = [_what_to_do(rule.docs.action, data)]
        no_fix = data.no_fix
        if no_fix is not None and len(no_fix.split()) <= HAZARD_WORDS:
            parts += ["", f"*No automatic fix:* {no_fix}."]
        elif no_fix is not None:
            below = [f"**No automatic fix:** {no_fix}."]
    why = f"**{rule.code}** `{rule.name}`: {_first_sentences(rule.docs.why, WHY_WORDS)}"
    for qualifier in qualifiers(diagnostic, with_proof=False):
        if fix is None and qualifier.startswith(OFF_BY_DEFAULT):
            continue  # said first, as the reason it can be left
        why += f" {_capitalized(qualifier)}."
    if data.nested is not None:
        why += " " + NESTED_BREAK
    parts += ["", why]
    link = _LINK if diagnostic.url else ""
    if is_recorded(diagnostic.code):
        parts += [
            "",
            f"Seen in the recorded run, not in the source: no static rule reports this line. Dynamo said *{data.dynamo or rule.reason}*{link}",
        ]
    elif diagnostic.url:
        parts += ["", f"Dynamo logs it as *{rule.reason}*{link}"]
    if below:
        parts += ["", *below]
    return _inert("\n".join(parts)).replace(_LINK, f": [{diagnostic.reason_id}]({diagnostic.url})")


# Where Dynamo's page is linked: the one link a hover makes, put in after `_inert`.
_LINK = "\0link\0"
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
_LINK_SYNTAX = re.compile(r"\]\(|<(?=[A-Za-z][A-Za-z0-9+.-]{1,31}:)")


def _plain_values(data: FindingData) -> FindingData:
    """`data` with what came from a run's or a proof's file (Dynamo's words, a guard, the proved
    command and its differences; a repository can ship those files) made plain text in Markdown:
    no image fetched, no link of the file's choosing."""
    proof = data.proof
    if proof is not None:
        proof = replace(
            proof,
            command=_in_code(proof.command),
            differences=tuple(_escaped(d) for d in proof.differences),
        )
    return replace(
        data,
        dynamo=_escaped(data.dynamo) if data.dynamo is not None else None,
        guard=_in_code(data.guard) if data.guard is not None else None,
        proof=proof,
    )


def _escaped(text: str) -> str:
    """`text` shown as it is in Markdown: each character Markdown reads escaped, lines joined."""
    return _MARKDOWN.sub(r"\\\1", " ".join(text.split()))


def _in_code(text: str) -> str:
    """`text` for a code span: no backtick to close it, on one line."""
    return " ".join(text.replace("`", "'").split())


def _inert(text: str) -> str:
    """No link or image in what graphmend writes from the source (a string literal quoted in a
    hazard): `](` and `<scheme:` are broken wherever they occur, in code spans too."""
    return _LINK_SYNTAX.sub(lambda m: "] (" if m.group(0) == "](" else "< ", text)


def _what_to_do(action: str, data: FindingData) -> str:
    """What a finding with no fix leads with: what to do instead when the refusal says (a setting
    where the model is compiled); why it can be left, when a plain compile never reaches it; else
    what the rule says to do by hand."""
    if data.action is not None:
        return f"**What to do:** {_capitalized(data.action)}."
    if data.off_by_default is not None:
        return f"**Can be left as is:** a plain compile never reaches it: `{data.off_by_default}` is false by default."
    return f"**What to do:** {action}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _first_sentences(text: str, words: int) -> str:
    """The first sentence of `text`, and the next ones while they fit in `words` words, without
    their asides in parentheses (the rest is on the rule's page)."""
    first, *rest = re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", without_asides(text))
    taken = [first]
    for sentence in rest:
        if sum(len(s.split()) for s in [*taken, sentence]) > words:
            break
        taken.append(sentence)
    return " ".join(taken)


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
