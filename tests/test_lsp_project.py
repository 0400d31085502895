"""The server with a workspace: findings in a helper module that compiled code of another module
calls, kept current as files change in the editor and on disk; closed files on request. Under
VS Code's and Neovim's client capabilities (push and pull diagnostics)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from conftest import ROOT
from lsp_helpers import accept_registrations, change_document, open_document, uses_pull
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

PROJECT = ROOT / "tests" / "dynamo_projects" / "pos_helper_logging"
TIMEOUT = 20.0


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    copy = tmp_path / "pos_helper_logging"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _client(closed_files: bool):  # noqa: ANN202 - a pytest-lsp fixture
    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]),
        params=["visual_studio_code", "neovim"],
    )
    async def client(request, lsp_client: LanguageClient, workspace: Path):
        lsp_client.registrations = accept_registrations(lsp_client)
        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(request.param),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
                initialization_options={"graphmend": {"debounce": 20, "closedFiles": closed_files}},
            )
        )
        yield
        await lsp_client.shutdown_session()

    return client


client = _client(closed_files=False)
closed_files_client = _client(closed_files=True)


async def _until(client: LanguageClient, uri: str, predicate, timeout: float = TIMEOUT) -> list[types.Diagnostic]:
    """The diagnostics of `uri` once `predicate` holds for them (pulled again, or the next pushes)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if uses_pull(client):
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            found = list(report.items)
        else:
            found = list(client.diagnostics.get(uri, []))
        if predicate(found):
            return found
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(
                f"diagnostics of {uri} never satisfied the test: {[(d.code, d.range.start.line) for d in found]}"
            )
        await asyncio.sleep(0.1)


def _codes(found: list[types.Diagnostic]) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line + 1) for d in found)


async def test_a_helper_module_reached_from_compiled_code_elsewhere(client: LanguageClient, workspace: Path) -> None:
    checks = workspace / "checks.py"
    open_document(client, checks.as_uri(), checks.read_text())
    found = await _until(client, checks.as_uri(), lambda d: len(d) == 2)
    assert _codes(found) == [("GM101", 10), ("GM202", 11)]
    assert found[0].related_information is not None
    (related,) = found[0].related_information
    assert related.location.uri == (workspace / "model.py").as_uri()
    assert related.location.range.start.line == 10  # `def forward` in model.py
    assert related.message.startswith(
        "`check_padding` is reached from compiled `pos_helper_logging.model.Model.forward`"
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(checks.as_uri()), types.Position(9, 9))
    )
    # The log in its branch is kept in the graph (issue 50), where a deferral would have been dropped
    # in this inlined helper: the `if` now has a fix, unsafe for what the message still changes.
    assert hover.contents.value.startswith("**Fix (unsafe):** Compute both branches and select with `torch.where`")
    assert (
        'under CUDA graphs (`mode="reduce-overhead"`) the graph that holds the message is not recorded as a CUDA graph'
        in hover.contents.value
    )
    assert "each caller splits at its call too" in hover.contents.value  # a nested break


async def test_editing_the_caller_updates_the_callee(client: LanguageClient, workspace: Path) -> None:
    checks, model = workspace / "checks.py", workspace / "model.py"
    open_document(client, checks.as_uri(), checks.read_text())
    await _until(client, checks.as_uri(), lambda d: len(d) == 2)
    text = model.read_text()
    open_document(client, model.as_uri(), text)
    change_document(client, model.as_uri(), text.replace("input_ids = validate(input_ids)\n", ""), 2)
    await _until(client, checks.as_uri(), lambda d: not d)  # nothing calls the helper any more
    change_document(client, model.as_uri(), text, 3)
    await _until(client, checks.as_uri(), lambda d: len(d) == 2)


async def test_a_change_on_disk_is_seen_through_the_file_watcher(client: LanguageClient, workspace: Path) -> None:
    checks, model = workspace / "checks.py", workspace / "model.py"
    open_document(client, checks.as_uri(), checks.read_text())
    await _until(client, checks.as_uri(), lambda d: len(d) == 2)
    watched = client.capabilities.workspace.did_change_watched_files
    registered = [
        r.register_options for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    ]
    watchers = [{"globPattern": "**/*.py"}, {"globPattern": "**/.graphmend/runs/**"}]  # runs: test_lsp
    assert registered == ([{"watchers": watchers}] if watched.dynamic_registration else [])
    model.write_text(model.read_text().replace("input_ids = validate(input_ids)\n", ""))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=model.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await _until(client, checks.as_uri(), lambda d: not d)


async def test_closed_files_are_reported_when_asked(closed_files_client: LanguageClient, workspace: Path) -> None:
    client = closed_files_client
    checks = workspace / "checks.py"
    if uses_pull(client):
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
            items = {item.uri: item.items for item in report.items}
            if items.get(checks.as_uri()) or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.1)
    else:
        items = {}
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while not client.diagnostics.get(checks.as_uri()) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
        items = dict(client.diagnostics)
    assert _codes(list(items[checks.as_uri()])) == [("GM101", 10), ("GM202", 11)]
    assert (workspace / "model.py").as_uri() not in items or not items[(workspace / "model.py").as_uri()]
    progress = [report for reports in client.progress_reports.values() for report in reports]
    assert isinstance(progress[0], types.WorkDoneProgressBegin) and isinstance(progress[-1], types.WorkDoneProgressEnd)
