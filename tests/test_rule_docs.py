"""Rule documentation is data on each rule; `graphmend rule` and docs/rules/ are rendered from it."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, run

from graphmend import api
from graphmend.rules import RULES

RULE_DOCS = ROOT / "docs" / "rules"
REGENERATE = "graphmend rule --write-docs docs/rules"


def test_docs_rules_pages_are_the_rules_docs() -> None:
    """docs/rules/ is generated: a rule whose docs, name or message changed fails here until the
    pages are written again."""
    pages = api.rule_pages()
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in RULE_DOCS.glob("*.md")}
    outdated = sorted(name for name, page in pages.items() if on_disk.get(name) != page)
    assert not outdated, f"docs/rules/ is out of date ({', '.join(outdated)}): run `{REGENERATE}`"
    extra = sorted(set(on_disk) - set(pages))
    assert not extra, f"docs/rules/ has pages of no rule: delete {', '.join(extra)}"


def test_every_rule_is_documented_in_one_line_prose() -> None:
    """Every front renders the same fields; prose with line breaks would render differently in each."""
    for rule in RULES:
        docs = rule.docs
        for text in (docs.what, docs.why, docs.fix, docs.why_title):
            assert text and text == " ".join(text.split()), f"{rule.code}: {text!r}"
        assert docs.example.strip() and docs.example == docs.example.strip("\n"), rule.code


def test_rule_prints_name_code_message_and_docs(capsys) -> None:
    code, out, _ = run(capsys, "rule", "GM101")
    assert code == 0
    rule = api.RULES_BY_CODE["GM101"]
    assert out == api.rule_page(rule)
    assert out.startswith("# data-dependent-if (GM101)\n")
    assert f"Message: {rule.message}" in out
    assert "## Why it breaks the graph\n\nDynamo traces with fake tensors" in out
    assert "```python\nif x.sum() > 10:\n    z = a + b\n" in out
    assert "## Fix and its safety\n\ncompute both branches" in out
    assert "[gb0170](https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html)" in out


def test_rule_takes_a_lowercase_code_and_names_a_cuda_graph_rules_heading(capsys) -> None:
    code, out, _ = run(capsys, "rule", "gm401")
    assert code == 0
    assert "## Why it keeps work out of CUDA graphs\n" in out and "Dynamo's pages" not in out


def test_rule_all_prints_every_rule(capsys) -> None:
    code, out, _ = run(capsys, "rule", "--all")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("# ")] == [f"# {r.name} ({r.code})" for r in RULES]


def test_rule_unknown_code_or_none_is_an_error(capsys) -> None:
    code, out, err = run(capsys, "rule", "GM999")
    assert (code, out) == (2, "")
    assert "no rule GM999" in err
    assert run(capsys, "rule")[0] == 2
    assert run(capsys, "rule", "GM101", "--all")[0] == 2


def test_rule_write_docs_writes_every_page(tmp_path: Path, capsys) -> None:
    target = tmp_path / "rules"
    code, out, _ = run(capsys, "rule", "--write-docs", str(target))
    assert code == 0 and out == f"Wrote {len(RULES) + 1} pages to {target}.\n"
    assert {p.name: p.read_text(encoding="utf-8") for p in target.iterdir()} == api.rule_pages()
