"""Pull diagnostics (LSP 3.17 `textDocument/diagnostic` and `workspace/diagnostic`), for clients
that ask instead of listening."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from .edit.diagnostics import to_lsp_diagnostics
from .session.capabilities import DIAGNOSTIC_OPTIONS
from .session.state import GraphmendServer, server


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, DIAGNOSTIC_OPTIONS)
async def pull_diagnostics(
    ls: GraphmendServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    if not ls.is_open(uri):
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # closed: nothing to show
    pending = ls.pending_analyses.get(ls.analysis_key(uri))  # a cell's is its notebook's
    if pending is not None:
        try:
            await asyncio.shield(pending)
        except asyncio.CancelledError:
            pass
    result = ls.current(uri)
    if result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    # The diagnostics count too: the same text gets other marks once a run is recorded.
    result_id = f"{result.version}:{hash((result.text, result.settings, result.context, result.diagnostics))}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    items = to_lsp_diagnostics(uri, result, ls.workspace.position_codec, ls.client_supports.related_information)
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


@server.feature(types.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostics(
    ls: GraphmendServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Open documents' current diagnostics, and closed files' when `closedFiles` is on."""
    codec, related_information = ls.workspace.position_codec, ls.client_supports.related_information
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for notebook_uri in list(ls.workspace.notebook_documents):
        analysis = ls.current_notebook(notebook_uri)
        for cell in analysis.snapshot.cells if analysis is not None else ():
            found = analysis.cell_analysis(cell.uri)  # type: ignore[union-attr]
            if found is not None:  # under the uri the client gave the cell
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=cell.uri,
                        items=to_lsp_diagnostics(cell.uri, found, codec, related_information),
                        version=found.version,
                    )
                )
    for uri in list(ls.workspace.text_documents):
        if ls.notebook_of(uri) is not None:
            continue  # a notebook cell: above
        result = ls.current(uri)
        if result is not None:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=to_lsp_diagnostics(uri, result, codec, related_information), version=result.version
                )
            )
    for uri, (_, diagnostics) in list(ls.closed_diagnostics.items()):
        items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=diagnostics, version=None))
    return types.WorkspaceDiagnosticReport(items=items)
