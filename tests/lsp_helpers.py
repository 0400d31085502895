"""Driving graphmend-lsp from pytest-lsp the way VS Code and Neovim do."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient


def accept_registrations(client: LanguageClient) -> list[types.Registration]:
    """Answer `client/registerCapability` as editors do (pytest-lsp's client has no handler for
    it); the registrations received are collected in the returned list."""
    registrations: list[types.Registration] = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    return registrations


def uses_pull(client: LanguageClient) -> bool:
    capabilities = client.capabilities
    return bool(capabilities and capabilities.text_document and capabilities.text_document.diagnostic is not None)


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The diagnostics the editor shows now: pulled (LSP 3.17 clients) or the next push."""
    if uses_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return list(report.items)
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def text_edits(edit: types.WorkspaceEdit, uri: str) -> tuple[list[types.TextEdit], int | None]:
    """The edits for `uri` and the document version they were made for (None if unversioned)."""
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
                return list(change.edits), change.text_document.version
    if edit.changes and uri in edit.changes:
        return list(edit.changes[uri]), None
    return [], None


def _offset(text: str, position: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += len(char.encode("utf-8")) if encoding == "utf-8" else len(char.encode("utf-16-le")) // 2
    return offset + len(line)


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply edits as an editor would (positions in the negotiated encoding)."""
    spans = sorted(
        ((_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The code actions offered for one diagnostic, as an editor's lightbulb asks for them."""
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [a for a in actions or [] if isinstance(a, types.CodeAction)]
