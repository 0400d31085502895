"""Notebook document sync (LSP 3.17): opening, editing or saving a notebook schedules the analysis
of all its cells as one module; closing it clears its cells' diagnostics. pygls keeps the notebook
and its cells' text documents in the workspace before these handlers run."""

from __future__ import annotations

from lsprotocol import types

from . import open_documents
from .session.state import GraphmendServer, server


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: GraphmendServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.documents_changed()
    open_documents.schedule(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: GraphmendServer, params: types.DidChangeNotebookDocumentParams) -> None:
    if ls.options.run == "onType":
        open_documents.schedule(ls, params.notebook_document.uri, ls.options.debounce_ms)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def did_save_notebook(ls: GraphmendServer, params: types.DidSaveNotebookDocumentParams) -> None:
    open_documents.schedule(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: GraphmendServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.forget_notebook(params.notebook_document.uri)
    for cell in params.cell_text_documents:
        open_documents.clear_diagnostics(ls, cell.uri)
    ls.documents_changed()
