"""Document sync: each open, change and save schedules an analysis; a close clears the document's
diagnostics, and the file on disk counts again in the workspace index."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from . import open_documents, workspace
from .edit.locations import path_of
from .session.state import GraphmendServer, server


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GraphmendServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.documents_changed()
    open_documents.schedule(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GraphmendServer, params: types.DidChangeTextDocumentParams) -> None:
    if ls.options.run == "onType":
        open_documents.schedule(ls, params.text_document.uri, ls.options.debounce_ms)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GraphmendServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        open_documents.analyse_open_again(ls)
    else:
        open_documents.schedule(ls, uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GraphmendServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.forget_document(uri)
    open_documents.clear_diagnostics(ls, uri)
    ls.documents_changed()
    path = path_of(uri)
    if path is not None and ls.index.close(path):
        open_documents.refresh_contexts(ls)
        if ls.index.covers(path):
            asyncio.get_running_loop().create_task(workspace.reindex(ls, [path]))
