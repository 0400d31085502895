"""Each rule's documentation rendered from its `docs` fields: the markdown page `graphmend rule`
prints and docs/rules/ holds (`graphmend rule --write-docs docs/rules` writes them), and the
one-paragraph text SARIF carries. One renderer, so that no front parses prose."""

from __future__ import annotations

from .diagnostics import GB_DOC_URL
from .rules import RULES, Rule
from .rules.base import RuleDocs

FIX_TITLE = "Fix and its safety"
INDEX = "README.md"


def rule_page(rule: type[Rule]) -> str:
    """The markdown page of one rule: its name, code, message, the reason torch logs, whether a
    rewrite can remove it, and its docs, one section each."""
    docs = rule.docs
    pages = ", ".join(f"[{gb}]({GB_DOC_URL.format(gb)})" for gb in rule.reason_ids())
    lines = [
        f"# {rule.name} ({rule.code})",
        "",
        f"Message: {rule.message}",
        "",
        f"What to do: {docs.action}",
        "",
        f"Reason in torch's log: *{rule.reason}*",
        "",
        *([f"Dynamo's pages: {pages}", ""] if pages else []),
        f"Fixable: {'yes' if rule.fixable else 'no'}",
        "",
        "## What it does",
        "",
        docs.what,
        "",
        f"## {docs.why_title}",
        "",
        docs.why,
        "",
        "## Example",
        "",
        "```python",
        docs.example,
        "```",
        "",
        f"## {FIX_TITLE}",
        "",
        docs.fix,
    ]
    return "\n".join(lines) + "\n"


def rules_index() -> str:
    """docs/rules/README.md: one row per rule, linking its page."""
    rows = [
        f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {_cell(rule.message)} | {'yes' if rule.fixable else 'no'} |"
        for rule in RULES
    ]
    lines = [
        "# Rules",
        "",
        "One page per rule, generated from the `docs` field of its class in `server/graphmend/rules/`: edit the",
        "rule, then run `graphmend rule --write-docs docs/rules` (`tests/test_rule_docs.py` fails until the",
        "pages match). `graphmend rule CODE` prints a page in the terminal.",
        "",
        "| Code | Name | Message | Fixable |",
        "|---|---|---|---|",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def rule_pages() -> dict[str, str]:
    """Every file of docs/rules/, by name: a page per rule and the index."""
    return {**{f"{rule.code}.md": rule_page(rule) for rule in RULES}, INDEX: rules_index()}


def plain_text(docs: RuleDocs) -> str:
    """The docs as one paragraph with their headings, whitespace collapsed (SARIF's `help`)."""
    text = f"What it does: {docs.what} {docs.why_title}: {docs.why} Example: {docs.example} {FIX_TITLE}: {docs.fix}"
    return " ".join(text.split())


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|")
