"""The server under bad input: a huge file does not stall other requests; broken settings are
reported in the log, never fatal, and change no file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsp_helpers import accept_registrations, diagnostics, open_document
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

PRINTS = 'import torch\n\n\n@torch.compile\ndef f(x):\n    print("x", x)\n    return x\n'
BLOCK = "@torch.compile\ndef f{i}(x):\n    if x.sum() > {i}:\n        print(x)\n    return x\n" + "# filler\n" * 20


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]))
async def client(lsp_client: LanguageClient):
    accept_registrations(lsp_client)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"), initialization_options={"debounce": 0}
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_requests_are_answered_while_a_huge_file_is_analysed(client: LanguageClient, tmp_path: Path) -> None:
    small = tmp_path / "small.py"
    small.write_text(PRINTS)
    open_document(client, small.as_uri(), PRINTS)
    await diagnostics(client, small.as_uri())
    huge_text = "import torch\n" + "".join(BLOCK.format(i=i) for i in range(2000))
    assert huge_text.count("\n") >= 50_000
    huge = tmp_path / "huge.py"
    huge.write_text(huge_text)
    open_document(client, huge.as_uri(), huge_text)
    analysed = asyncio.ensure_future(diagnostics(client, huge.as_uri()))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=small.as_uri()), position=types.Position(5, 6))
    )
    assert hover is not None and "GM201" in hover.contents.value
    assert not analysed.done(), "the hover waited for the huge file's analysis"
    assert len(await analysed) == 4000


async def test_broken_pyproject_is_reported_and_defaults_apply(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.graphmend\nselect = [\n")
    target = tmp_path / "m.py"
    target.write_text(PRINTS)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    open_document(client, target.as_uri(), PRINTS)
    assert [d.code for d in await diagnostics(client, target.as_uri())] == ["GM201"]
    assert any("invalid TOML" in m.message for m in client.log_messages)
    assert not client.messages  # nothing modal
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


async def test_unknown_editor_setting_is_reported_not_fatal(client: LanguageClient, tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text(PRINTS)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"graphmend": {"selcet": ["GM1"], "run": "sometimes", "debounce": 0, "ignore": ["GM999"]}}
        )
    )
    open_document(client, target.as_uri(), PRINTS)
    assert [d.code for d in await diagnostics(client, target.as_uri())] == ["GM201"]
    logged = " ".join(m.message for m in client.log_messages)
    assert "unknown setting `selcet`" in logged and "`run` must be" in logged
    assert "`ignore` names no graphmend rule: GM999" in logged


def test_a_cancel_for_an_answered_request_is_not_a_warning() -> None:
    """pygls warns when a client cancels a request it has already answered; editors showed those
    warnings in their output channel. Other pygls warnings still pass."""
    import logging

    from graphmend.lsp.__main__ import RoutineCancels

    def record(message: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("pygls.protocol.json_rpc", logging.WARNING, __file__, 1, message, args, None)

    routine = RoutineCancels()
    assert not routine.filter(record('Cancel notification for unknown message id "%s"', 12))
    assert routine.filter(record('Received response to unknown message id "%s"', 12))


def test_the_index_runs_below_the_open_documents_worker() -> None:
    """On a 2-core machine the index build's processes competed for the cores with the worker that
    analyses the open document: they run 10 nicer (benchmarks/lsp_latency.py --workspace)."""
    import os
    import subprocess

    probe = (
        "import os\nfrom graphmend.lsp.worker import index_worker_init\n"
        "index_worker_init(os.getppid())\nprint(os.nice(0))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert int(done.stdout) == min(os.nice(0) + 10, 19)


def test_the_server_parses_one_text_at_a_time() -> None:
    """CPython before 3.13 can fail two threads parsing at once (`SystemError: AST constructor
    recursion depth mismatch`, cpython#106905; CI's keystroke replay met it as a request answered
    with that error): the server, which parses on its event loop and its threads, takes turns."""
    import ast
    import subprocess

    from conftest import ROOT

    code = (
        "import sys; from graphmend.lsp import parsing; parsing.install(); "
        "sys.exit(0 if parsing.installed() or sys.version_info >= (3, 13) else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
    main = ast.parse((ROOT / "server" / "graphmend" / "lsp" / "__main__.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.Call) and ast.unparse(n.func) == "parsing.install" for n in ast.walk(main))
