"""Open documents' diagnostics, kept current: each open, change or save schedules an analysis
(debounced per document; a notebook's cells as one module), run in the worker off the event loop
and published only for the version it was computed from, or pulled where the client asks.

An analysed file's summary (what it calls and compiles) goes to the workspace index once the editor
pauses; when the call graph changes, the documents whose project context changed are analysed
again, and closed files' too (`closed_files`)."""

from __future__ import annotations

import asyncio
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from lsprotocol import types

from .. import api
from . import closed_files, notebook_analysis
from .edit.diagnostics import to_lsp_diagnostics
from .edit.locations import path_of
from .session.state import GraphmendServer
from .worker import Analysis, analyse

RUNS_SETTLE_S = 1.0  # a run writes its events as they come: documents are analysed again once its files rest
REFRESH_DELAY_S = 0.2  # after a change to the call graph, other documents' contexts are checked this much later
# A document's summary is taken once the editor pauses this long, a new one's too: taken at once after
# the open, it ran beside the first edits (T5 typed right after opening: 6-10x `ast.parse`, 2.5x without).
SUMMARY_DELAY_S = 0.5
SUMMARY_IN_SERVER_MAX_CHARS = 512_000  # summaries of larger documents are taken in the worker
_CONTEXTS = "contexts"  # the key of the one pending refresh of contexts
_RUNS = "runs"  # the key of the one pending analysis of every open document after a run changed


def schedule(ls: GraphmendServer, uri: str, delay_ms: int = 0) -> None:
    """(Re)start the analysis of a document; an older pending run for it is dropped. A notebook
    cell's is its notebook's, keyed by the notebook's uri."""
    notebook = ls.notebook_of(uri)
    if notebook is not None or uri in ls.workspace.notebook_documents:
        key = notebook.uri if notebook is not None else uri
        ls.pending_analyses.restart(key, lambda: _analyse_notebook(ls, key), delay_ms / 1000)
        return
    ls.pending_analyses.restart(uri, lambda: _analyse_document(ls, uri), delay_ms / 1000)


async def _analyse_document(ls: GraphmendServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    text, version = document.source, document.version
    path = path_of(uri)
    result = await _analysis(ls, text, version, path, ls.settings_for(path))
    latest = ls.workspace.get_text_document(uri)
    if latest.version != version or latest.source != text or not ls.is_open(uri):
        return  # the document moved on (or closed): a newer run will publish
    ls.results[uri] = result
    if path is not None:  # what this file calls or compiles, for the other files, once the editor pauses
        summarize_later(ls, uri)
    if ls.client_supports.pull_diagnostics:
        _refresh_pull(ls)
    else:
        publish(ls, uri, result)


async def _analyse_notebook(ls: GraphmendServer, uri: str) -> None:
    document = ls.workspace.get_notebook_document(notebook_uri=uri)
    if document is None:
        return
    snap = notebook_analysis.snapshot(ls.workspace, document)
    path = path_of(uri)
    module = await _analysis(ls, snap.notebook.module, snap.version, path, ls.settings_for(path))
    if not notebook_analysis.is_current(snap, ls.workspace):
        return  # a cell moved on (or the notebook closed): a newer run will publish
    analysis = ls.keep_notebook(notebook_analysis.split(snap, module, path))
    if ls.client_supports.pull_diagnostics:
        _refresh_pull(ls)
    else:
        for cell in snap.cells:
            result = analysis.cell_analysis(cell.uri)
            if result is not None:
                publish(ls, cell.uri, result)


async def _analysis(
    ls: GraphmendServer, text: str, version: int | None, path: Path | None, settings: api.Settings
) -> Analysis:
    """A text's analysis in the worker, with the project's context; one over the size limit is
    refused at once, and its text never goes to the worker."""
    if api.too_large(text, settings):
        return analyse(text, version, path, settings)
    await ls.project_ready()
    return await ls.worker.analyse(text, version, path, settings, ls.index.context_for(path))


def publish(ls: GraphmendServer, uri: str, result: Analysis) -> None:
    diagnostics = to_lsp_diagnostics(uri, result, ls.workspace.position_codec, ls.client_supports.related_information)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=result.version, diagnostics=diagnostics)
    )


def clear_diagnostics(ls: GraphmendServer, uri: str) -> None:
    """A closed document's diagnostics go from the editor (a pulling client stops asking itself)."""
    if not ls.client_supports.pull_diagnostics:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def analyse_open_again(ls: GraphmendServer) -> None:
    """Every open file and notebook analysed again: what they are judged against changed (a
    pyproject.toml saved, a run recorded)."""
    for uri in list(ls.workspace.text_documents):
        if uri.endswith(".py"):
            schedule(ls, uri)
    for uri in list(ls.workspace.notebook_documents):
        schedule(ls, uri)


def runs_changed(ls: GraphmendServer, delay_s: float = RUNS_SETTLE_S) -> None:
    """A run was recorded, or the newest one's files changed: the open documents are analysed again
    (which findings it confirms) once they have rested `delay_s`."""

    async def again() -> None:
        analyse_open_again(ls)

    ls.pending_refresh.restart(_RUNS, again, delay_s)


def _refresh_pull(ls: GraphmendServer) -> None:
    if ls.client_supports.diagnostic_refresh:
        ls.workspace_diagnostic_refresh(None)


# ---------------------------------------------------------------------------------------- the workspace index
def summarize_later(ls: GraphmendServer, uri: str, delay_s: float = SUMMARY_DELAY_S) -> None:
    """Once the editor pauses, the document's summary for the workspace index (what it calls
    and compiles matters to other files, not to the keystroke being analysed)."""
    ls.pending_summaries.restart(uri, lambda: _summarize(ls, uri), delay_s)


async def _summarize(ls: GraphmendServer, uri: str) -> None:
    if not ls.is_open(uri):
        return
    document = ls.workspace.get_text_document(uri)
    path = path_of(uri)
    if path is None:
        return
    text = document.source
    # On a thread of the server, beside the worker, so that it never delays the analysis of the
    # next document opened; a large text goes to the worker (memory stays there).
    runner = ls.executor if len(text) <= SUMMARY_IN_SERVER_MAX_CHARS else ls.worker.pool()
    try:
        summary = await asyncio.get_running_loop().run_in_executor(
            runner, api.summarize_source, text, path, ls.settings_for(path)
        )
    except BrokenProcessPool:
        return  # the worker was replaced: the next edit asks again
    still_current = ls.is_open(uri) and ls.workspace.get_text_document(uri).source == text
    if still_current and ls.index.update(path, summary, from_open_document=True):
        refresh_contexts(ls)


def refresh_contexts(ls: GraphmendServer) -> None:
    """Soon (edits come in bursts), re-analyse the open documents whose project context changed."""
    ls.pending_refresh.restart(_CONTEXTS, lambda: _refresh_contexts(ls), REFRESH_DELAY_S)


async def _refresh_contexts(ls: GraphmendServer) -> None:
    await ls.project_ready()
    for uri in list(ls.workspace.text_documents):
        result = ls.results.get(uri)
        if (
            result is not None
            and result.context != ls.index.context_for(path_of(uri))
            and uri not in ls.pending_analyses
        ):
            schedule(ls, uri)
    if ls.options.closed_files and ls.index.built:
        await closed_files.refresh(ls)
