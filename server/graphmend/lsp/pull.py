"""Pull diagnostics (LSP 3.17 `textDocument/diagnostic`), for clients that ask instead of listening."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from .state import SOURCE, GraphmendServer, server


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True),
)
async def pull_diagnostics(ls: GraphmendServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    if not ls.is_open(uri):
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # closed: nothing to show
    pending = ls.pending.get(ls.analysis_key(uri))  # a cell's is its notebook's
    if pending is not None:
        try:
            await asyncio.shield(pending)
        except asyncio.CancelledError:
            pass
    result = ls.current(uri)
    if result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{result.version}:{hash((result.text, result.settings, result.context))}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.to_lsp(uri, result), result_id=result_id)
