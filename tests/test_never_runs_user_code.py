"""Analysing never executes the analysed code: not its top level, not its imports (CLI and server)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from lsp_helpers import accept_registrations, diagnostics, open_document
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from graphmend.cli import main

PROGRAM = """import pathlib
pathlib.Path({marker!r}).write_text("top level ran")
import trap_module_{tag}  # importing it would write the second marker
import torch


@torch.compile
def f(x):
    if x.sum() > 0:
        print(x)
    return x
"""
TRAP = "import pathlib\npathlib.Path({marker!r}).write_text('import ran')\n"


def make_program(folder: Path, tag: str) -> tuple[Path, list[Path]]:
    markers = [folder / f"marker_{tag}_top", folder / f"marker_{tag}_import"]
    (folder / f"trap_module_{tag}.py").write_text(TRAP.format(marker=str(markers[1])))
    program = folder / f"program_{tag}.py"
    program.write_text(PROGRAM.format(marker=str(markers[0]), tag=tag))
    return program, markers


def test_cli_check_and_fix_do_not_run_the_file(tmp_path: Path, capsys, monkeypatch) -> None:
    program, markers = make_program(tmp_path, "cli")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", str(program)]) == 1
    assert main(["fix", "--unsafe-fixes", str(program)]) == 0
    assert "_print_in_graph_if(cond" in program.read_text() and "if x.sum() > 0" not in program.read_text()
    assert not [m for m in markers if m.exists()]
    assert not [m for m in sys.modules if m.startswith(("trap_module", "program_"))]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    accept_registrations(lsp_client)  # the workspace (the program's folder) is indexed too: parsed, never run
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual_studio_code"), root_uri=tmp_path.as_uri())
    )
    yield
    await lsp_client.shutdown_session()


async def test_server_does_not_run_the_file(client: LanguageClient, tmp_path: Path) -> None:
    program, markers = make_program(tmp_path, "lsp")
    uri = program.as_uri()
    open_document(client, uri, program.read_text())
    assert {d.code for d in await diagnostics(client, uri)} == {"GM101", "GM201"}
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(8, 8))
    )
    assert hover is not None
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="graphmend.showFixDiff", arguments=[uri])
    )
    assert not [m for m in markers if m.exists()]
