"""Documentation that mirrors code, and documentation that stays navigable: the purity table in
docs/fixes.md is the table the rewrites use; every relative link in README.md, CONTRIBUTING.md and
docs/*.md resolves to a file of the repository (an `#anchor` into a markdown file to one of its
headings, as GitHub makes them); README.md stays a five-minute read."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import ROOT

from graphmend.analysis.purity import PURITY_TABLE

TABLE = re.compile(r"<!-- purity-table:[^>]*-->\n(.*?)\n<!-- end purity-table -->", re.DOTALL)
README_MAX_LINES = 200
LINKED_PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines of a markdown text outside fenced code blocks."""
    lines, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            lines.append(line)
    return lines


def links(text: str) -> list[str]:
    """Every link target in a markdown text: inline links and images, reference definitions, and
    HTML `href`/`src`; none from code blocks or code spans."""
    found = []
    for line in prose_lines(text):
        reference = REFERENCE_LINK.match(line)
        if reference:
            found.append(reference.group(1))
            continue
        line = INLINE_CODE.sub("", line)
        found.extend(match.group(1) for match in INLINE_LINK.finditer(line))
        found.extend(match.group(1) for match in HTML_LINK.finditer(line))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text without markup, lower-cased, every character that is
    not a letter, a digit, `-`, `_` or a space removed, and spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings; a repeated heading gets `-1`, `-2`... as on GitHub."""
    seen: dict[str, int] = {}
    result = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target)) or target.startswith("//")


def test_purity_table_in_the_fixes_page_is_the_code_table() -> None:
    match = TABLE.search((ROOT / "docs" / "fixes.md").read_text(encoding="utf-8"))
    assert match, "docs/fixes.md lost its purity table markers"
    rows = [line for line in match.group(1).splitlines()[2:] if line.strip()]
    documented = [tuple(cell.strip() for cell in row.strip().strip("|").split(" | ")) for row in rows]
    assert documented == [tuple(row) for row in PURITY_TABLE]


def test_readme_is_a_five_minute_read() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the reference belongs in docs/"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in LINKED_PAGES])
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
            continue
        try:
            destination.relative_to(ROOT)
        except ValueError:
            broken.append(f"{target}: outside the repository")
            continue
        if anchor and destination.suffix == ".md" and unquote(anchor) not in anchors(destination):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {destination.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}:\n  " + "\n  ".join(broken)


def test_the_link_checker_sees_links_and_headings() -> None:
    """The checker itself: links in prose count, links in code do not; slugs are GitHub's."""
    text = "See [a](docs/a.md#x), ![i](m.png) and `[no](b.md)`.\n```\n[no](c.md)\n```\n[ref]: d.md\n"
    assert links(text) == ["docs/a.md#x", "m.png", "d.md"]
    assert slug("The paper's Table 2 (issue 3, acceptance 3)") == "the-papers-table-2-issue-3-acceptance-3"
    assert slug("`graphmend verify`: prove a rewrite") == "graphmend-verify-prove-a-rewrite"
    assert (
        slug("Agreement and graphs after the fix on 5.23.0, complete run")
        == "agreement-and-graphs-after-the-fix-on-5230-complete-run"
    )


def test_the_corpus_counts_the_docs_give_are_true() -> None:
    """Issue 40: three pages said 116 corpus programs and 9 project packages when there were 125 and 10."""
    corpus = ROOT / "tests" / "dynamo_corpus"
    programs = sorted(corpus.glob("*.py"))
    breaking = [p for p in programs if p.name.startswith("pos_")]
    packages = [p for p in (ROOT / "tests" / "dynamo_projects").iterdir() if p.is_dir()]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"the {len(programs)} programs of\n  [tests/dynamo_corpus/]" in readme
    assert f"the {len(packages)} packages of\n  [tests/dynamo_projects/]" in readme
    assert f"on the {len(programs)} programs of `dynamo_corpus/`" in (ROOT / "tests" / "README.md").read_text(
        encoding="utf-8"
    )
    rules = " ".join((ROOT / "docs" / "rules.md").read_text(encoding="utf-8").split())
    assert (
        f"({len(programs)} programs, {len(breaking)} with breaks and {len(programs) - len(breaking)} without," in rules
    )


def test_the_tests_readme_lists_every_test_file() -> None:
    """Issue 40: tests/README.md covered 21 of 40 test files."""
    listed = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((ROOT / "tests").glob("test_*.py")) if f"`{p.name}`" not in listed]
    assert not missing, f"tests/README.md does not say what these prove: {missing}"
