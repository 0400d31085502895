"""Bad input gets a clear diagnostic, never an exception, and no file is ever changed."""

from __future__ import annotations

import pytest

from graphmend.api import check_source

FLAGGED = "import torch\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"


def codes(text: str) -> list[tuple[int, str]]:
    return [(d.range.start.line, d.code) for d in check_source(text)]


@pytest.mark.parametrize("text", ["", "\n", "   ", "# only a comment\n", "\ufeff"])
def test_empty_files(text: str) -> None:
    assert codes(text) == []


def test_crlf_and_tabs_keep_positions() -> None:
    text = FLAGGED.replace("    ", "\t").replace("\n", "\r\n")
    (diagnostic,) = check_source(text)
    assert (diagnostic.code, diagnostic.range.start.line, diagnostic.range.start.character) == ("GM101", 4, 4)


def test_form_feed_is_not_a_line_break() -> None:
    # str.splitlines() would split at \x0c and shift every later line; Python's tokenizer does not.
    text = "import torch\n\x0c\n@torch.compile\ndef f(x):\n    s = 'a\x0cb'\n    if x.sum() > 0:\n        return x\n    return -x\n"
    assert codes(text) == [(5, "GM101")]


def test_syntax_error_mid_typing_is_one_error_diagnostic() -> None:
    (diagnostic,) = check_source(FLAGGED.replace("if x.sum() > 0:", "if x.sum() >"))
    assert diagnostic.code == "GM001" and diagnostic.severity.value == "error"
    assert diagnostic.range.start.line == 4 and "SyntaxError" in diagnostic.message


def test_null_bytes() -> None:
    (diagnostic,) = check_source("x = 1\x00\n")
    assert diagnostic.code == "GM001" and "null bytes" in diagnostic.message


def test_byte_order_mark_is_not_code_but_counts_in_columns() -> None:
    (diagnostic,) = check_source("\ufeffimport torch; torch.compile(lambda: 0)\n" + FLAGGED.split("\n", 1)[1])
    assert diagnostic.code == "GM101" and diagnostic.range.start.line == 4
    (diagnostic,) = check_source("\ufeffimport torch\n@torch.compile\ndef f(x): return x if x.sum() else -x\n")
    assert (diagnostic.code, diagnostic.range.start.line, diagnostic.range.start.character) == ("GM102", 2, 22)


def test_deep_nesting_is_reported_not_raised() -> None:
    deep_parse = "import torch\ny = x" + " + x" * 20000 + "\n"
    deep_analysis = "import torch\n@torch.compile\ndef f(x):\n    y = " + "-" * 2500 + "x\n    return y\n"
    for text in (deep_parse, deep_analysis):
        result = check_source(text)
        assert all(d.code == "GM001" for d in result)


def test_fifty_thousand_lines() -> None:
    block = "@torch.compile\ndef f{i}(x):\n    if x.sum() > {i}:\n        print(x)\n    return x\n" + "# filler\n" * 20
    text = "import torch\n" + "".join(block.format(i=i) for i in range(2000))
    assert text.count("\n") >= 50_000
    result = check_source(text)
    assert len(result) == 4000 and {d.code for d in result} == {"GM101", "GM201"}


def test_suppression_marker_inside_a_string_does_not_suppress() -> None:
    text = FLAGGED.replace("if x.sum() > 0:", "if x.sum() > len('# graphmend: ignore'):")
    assert codes(text) == [(4, "GM101")]
