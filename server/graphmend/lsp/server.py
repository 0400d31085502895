"""`graphmend-lsp`: publishes graphmend's diagnostics for open Python files.

This is the first slice of the server: diagnostics on open, change, save and close. Quick fixes,
hover, settings and pull diagnostics build on it (see the language-server issue).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__, api
from ..diagnostics import Diagnostic, Severity

SOURCE = "graphmend"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
}

server = LanguageServer("graphmend", __version__)


def _to_lsp(diagnostic: Diagnostic, uri: str, lines: list[str], codec) -> types.Diagnostic:  # noqa: ANN001
    def lsp_range(r) -> types.Range:  # noqa: ANN001
        return codec.range_to_client_units(
            lines,
            types.Range(
                types.Position(r.start.line, r.start.character), types.Position(r.end.line, r.end.character)
            ),
        )

    return types.Diagnostic(
        range=lsp_range(diagnostic.range),
        message=diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        related_information=[
            types.DiagnosticRelatedInformation(types.Location(uri, lsp_range(r.range)), r.message)
            for r in diagnostic.related
        ]
        or None,
        data=dict(diagnostic.data),
    )


def publish(ls: LanguageServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    path_text = to_fs_path(uri)
    path = Path(path_text) if path_text else None
    try:
        settings = api.settings_for(path) if path is not None else api.Settings()
    except api.SettingsError as error:
        ls.window_log_message(types.LogMessageParams(types.MessageType.Warning, str(error)))
        settings = api.Settings()
    diagnostics = api.check_source(document.source, path, settings)
    lines = document.lines
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri,
            version=document.version,
            diagnostics=[_to_lsp(d, uri, lines, document.position_codec) for d in diagnostics],
        )
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))
