"""Document sync: each open, change and save schedules an analysis; a close clears the document's
diagnostics, and the file on disk counts again in the workspace index."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from . import workspace
from .state import GraphmendServer, path_of, server


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GraphmendServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.documents_changed()
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GraphmendServer, params: types.DidChangeTextDocumentParams) -> None:
    if ls.options.run == "onType":
        ls.schedule(params.text_document.uri, ls.options.debounce_ms)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GraphmendServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        for open_uri in list(ls.workspace.text_documents):
            if open_uri.endswith(".py"):
                ls.schedule(open_uri)
        for notebook_uri in list(ls.workspace.notebook_documents):
            ls.schedule(notebook_uri)
    else:
        ls.schedule(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GraphmendServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    for tasks in (ls.pending, ls._summaries):  # noqa: SLF001 - the server's own bookkeeping
        task = tasks.pop(uri, None)
        if task is not None:
            task.cancel()
    ls.results.pop(uri, None)
    if not ls.pull_mode:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.documents_changed()
    path = path_of(uri)
    if path is not None and ls.index.close(path):
        ls.refresh_contexts()
        if ls.index.covers(path):
            asyncio.get_running_loop().create_task(workspace.reindex(ls, [path]))
