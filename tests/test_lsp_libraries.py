"""The server reports a break inside an installed library at the workspace file's call, under VS
Code's and Neovim's client capabilities (push and pull diagnostics); see test_libraries.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import open_document
from pytest_lsp import LanguageClient
from test_libraries import write_workspace
from test_lsp_project import _client, _until


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path)[1].parent


client = _client(closed_files=False)  # test_lsp_project's client, opened on this workspace


async def test_a_break_in_a_library_is_shown_at_the_call(client: LanguageClient, workspace: Path) -> None:
    train = workspace / "train.py"
    open_document(client, train.as_uri(), train.read_text())
    found = await _until(client, train.as_uri(), lambda d: len(d) == 3)
    assert sorted((str(d.code), d.range.start.line + 1) for d in found) == [("GM101", 13), ("GM201", 13), ("GM302", 14)]
    [printed] = [d for d in found if d.code == "GM201"]
    assert printed.message.startswith("`fakelib.metrics.accuracy` breaks the graph in fakelib/metrics.py:3")
    assert printed.related_information is not None
    assert printed.related_information[0].location.uri.endswith("/site-packages/fakelib/metrics.py")
    assert printed.related_information[0].location.range.start.line == 2
