"""The server reports a break inside an installed library at the workspace file's call, under VS
Code's and Neovim's client capabilities (push and pull diagnostics); see test_libraries.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import accept_registrations, open_document
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from test_libraries import LIBRARY, USER
from test_lsp_project import _until


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    for name, text in LIBRARY.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(USER)
    (project / "pyproject.toml").write_text(f'[tool.graphmend]\nfollow-libraries = true\nlibrary-paths = ["{site}"]\n')
    return project


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]),
    params=["visual_studio_code", "neovim"],
)
async def client(request, lsp_client: LanguageClient, workspace: Path):  # noqa: ANN001, ANN201
    lsp_client.registrations = accept_registrations(lsp_client)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            initialization_options={"graphmend": {"debounce": 20}},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_a_break_in_a_library_is_shown_at_the_call(client: LanguageClient, workspace: Path) -> None:
    train = workspace / "train.py"
    open_document(client, train.as_uri(), train.read_text())
    found = await _until(client, train.as_uri(), lambda d: len(d) == 3)
    assert sorted((str(d.code), d.range.start.line + 1) for d in found) == [("GM101", 13), ("GM201", 13), ("GM302", 14)]
    [printed] = [d for d in found if d.code == "GM201"]
    assert printed.message.startswith("`fakelib.metrics.accuracy` breaks the graph in fakelib/metrics.py:3")
    assert printed.related_information is not None
    assert printed.related_information[0].location.uri.endswith("/site/fakelib/metrics.py")
    assert printed.related_information[0].location.range.start.line == 2
