"""The language server publishes graphmend's diagnostics, under VS Code's and Neovim's capabilities."""

from __future__ import annotations

import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import ROOT

FIGURE1 = ROOT / "examples" / "figure1.py"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]),
    params=["visual_studio_code", "neovim"],
)
async def client(request, lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(request.param), root_uri=ROOT.as_uri())
    )
    yield
    await lsp_client.shutdown_session()


async def test_open_change_close(client: LanguageClient) -> None:
    uri = FIGURE1.as_uri()
    text = FIGURE1.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.code == "GM101" and diagnostic.source == "graphmend"
    assert diagnostic.range == types.Range(types.Position(9, 7), types.Position(9, 19))
    assert diagnostic.code_description.href.endswith("gb0170.html")

    # A non-ASCII line before the branch moves it down one line; columns stay right.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text=text.replace("    x_1 = x * 2\n", "    x_1 = x * 2  # é😀\n    s = '😀'\n"))],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.range.start == types.Position(10, 7)

    # Non-ASCII before the flagged range on the same line: columns in the negotiated encoding.
    ternary = "    z = ('😀é', z)[1] if x.sum() > 10 else z\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [types.TextDocumentContentChangeWholeDocument(text=text.replace("    return torch.relu(z)\n", ternary + "    return torch.relu(z)\n"))],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    ternary_diagnostic = next(d for d in client.diagnostics[uri] if d.code == "GM102")
    prefix = ternary[: ternary.index("x.sum()")]
    encoding = client.capabilities.general.position_encodings if client.capabilities.general else None
    utf8 = bool(encoding) and encoding[0] == types.PositionEncodingKind.Utf8
    expected = len(prefix.encode("utf-8")) if utf8 else len(prefix.encode("utf-16-le")) // 2
    assert ternary_diagnostic.range.start == types.Position(13, expected)

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=4),
            [types.TextDocumentContentChangeWholeDocument(text=text.replace("def f(x, y):", "def f(x, y:"))],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[uri]] == ["GM001"]

    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri]) == []
