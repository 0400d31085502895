"""The server's state: the open documents' and notebooks' analyses, the options, the workspace
index, closed files' diagnostics, and the work pending on them.

It answers what is true now (a document's current analysis, its settings, whether it is open);
what runs when is `open_documents` and `closed_files` (on `schedule`), what the client sees is
`edit`'s conversions, and the handlers are one module per concern, gathered by `lsp/server.py`."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ... import __version__, api
from ...api import Position, Range
from .. import notebook_analysis
from ..edit.locations import from_client_position, path_of, to_client_range
from ..index import WorkspaceIndex, workspace_project
from ..notebook_analysis import NotebookAnalysis
from ..options import EditorOptions
from ..protocol import GraphmendProtocol
from ..schedule.tasks import KeyedTasks
from ..schedule.worker_pool import AnalysisWorker
from ..worker import Analysis, analyse
from .capabilities import NOTEBOOK_SYNC, TEXT_DOCUMENT_SYNC_KIND, ClientSupport

log = logging.getLogger("graphmend.lsp")


class GraphmendServer(LanguageServer):
    """pygls's server (the transport, the workspace's documents) with graphmend's state."""

    def __init__(self) -> None:
        super().__init__(
            "graphmend",
            __version__,
            text_document_sync_kind=TEXT_DOCUMENT_SYNC_KIND,
            protocol_cls=GraphmendProtocol,
            notebook_document_sync=NOTEBOOK_SYNC,
        )
        self.options = EditorOptions()
        self.client_name = ""  # the editor's name (`clientInfo`), where it says: messages name its commands
        self.results: dict[str, Analysis] = {}  # open document uri → the analysis of one of its versions
        self.notebook_results: dict[str, NotebookAnalysis] = {}  # notebook uri → its analysis, split by cell
        self.index = WorkspaceIndex()
        self.index_task: asyncio.Task[None] | None = None
        self.closed_diagnostics: dict[str, tuple[api.ProjectContext, list[types.Diagnostic]]] = {}  # closed files'
        self.reported_problems: set[str] = set()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-commands")
        self.worker = AnalysisWorker(self.executor, lambda message: self.log(types.MessageType.Warning, message))
        self.pending_analyses = KeyedTasks(self._report_task_error)  # by document uri; a notebook's by its uri
        self.pending_summaries = KeyedTasks(self._report_task_error)  # by document uri
        self.pending_refresh = KeyedTasks(self._report_task_error)  # re-checks of all open documents: contexts, runs

    # ------------------------------------------------------------------ errors and logging
    def report_server_error(self, error: Exception, source: Any) -> None:
        """A handler crash goes to the client's log, never to a modal error; the server keeps serving."""
        log.exception("graphmend-lsp internal error", exc_info=error)
        self.log(types.MessageType.Error, f"graphmend internal error: {type(error).__name__}: {error}")

    def _report_task_error(self, error: Exception) -> None:
        self.report_server_error(error, None)

    def log(self, kind: types.MessageType, message: str) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001 - no transport (tests, shutdown): logging must not fail
            log.warning(message)

    def report_once(self, message: str) -> None:
        if message not in self.reported_problems:
            self.reported_problems.add(message)
            self.log(types.MessageType.Warning, message)

    # ------------------------------------------------------------------ the client
    @property
    def client_supports(self) -> ClientSupport:
        """Read from the capabilities at each use: they are the client's from `initialize` on."""
        return ClientSupport.of(self.client_capabilities)

    def to_range(self, uri: str, lines: list[str], r: Range) -> types.Range:
        """A range of the document in the client's position units."""
        return to_client_range(self.workspace.get_text_document(uri).position_codec, lines, r)

    def from_position(self, uri: str, lines: list[str], position: types.Position) -> Position:
        """A position the client sent in the document, in code points."""
        return from_client_position(self.workspace.get_text_document(uri).position_codec, lines, position)

    # ------------------------------------------------------------------ documents
    def is_open(self, uri: str) -> bool:
        """Whether the client has the document open; pygls keys documents by the unquoted uri,
        while clients send it quoted (`%3D` in a notebook cell's fragment, `%20` in a path)."""
        return unquote(uri) in self.workspace.text_documents

    def notebook_of(self, uri: str) -> types.NotebookDocument | None:
        """The notebook a cell's text document belongs to; None for a file."""
        return self.workspace.get_notebook_document(cell_uri=uri)

    def analysis_key(self, uri: str) -> str:
        """The key of a document's pending analysis: a cell's is its notebook's."""
        notebook = self.notebook_of(uri)
        return notebook.uri if notebook is not None else uri

    def documents_changed(self) -> None:
        """With no document open, stop the worker after a while: an editor session with no Python
        file open holds no analysis memory; the next open starts a fresh worker."""
        self.worker.stop_when_idle(self.options.worker_idle_s, lambda: not self.workspace.text_documents)

    def forget_document(self, uri: str) -> None:
        """A closed document: its pending analysis and summary are cancelled, its analysis dropped."""
        self.pending_analyses.cancel(uri)
        self.pending_summaries.cancel(uri)
        self.results.pop(uri, None)

    def forget_notebook(self, uri: str) -> None:
        """A closed notebook: its pending analysis is cancelled, its analysis dropped."""
        self.pending_analyses.cancel(uri)
        self.notebook_results.pop(unquote(uri), None)

    # ------------------------------------------------------------------ analyses
    def settings_for(self, path: Path | None) -> api.Settings:
        base = api.Settings()
        if path is not None:
            try:
                base = api.settings_for(path)  # read again when a pyproject.toml changed: edits apply at once
            except api.SettingsError as error:
                self.report_once(f"graphmend: {error}; using defaults")
        for problem in self.options.problems:
            self.report_once(f"graphmend: {problem}")
        settings = self.options.apply(base)
        return settings.for_file(path) if path is not None else settings

    def analyse_now(self, uri: str) -> Analysis | None:
        """Analyse the document as it is now (on the calling thread)."""
        document = self.workspace.get_text_document(uri)
        if document.source is None:
            return None
        path = path_of(uri)
        return analyse(document.source, document.version, path, self.settings_for(path), self.index.context_for(path))

    def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version, computing it if needed; None for a
        document the client has not opened (nothing is read from disk behind the editor's back:
        the path may not exist, or be a FIFO that would block). A notebook cell's is its part of
        its notebook's analysis."""
        if not self.is_open(uri):
            return None
        notebook = self.notebook_of(uri)
        if notebook is not None:
            analysis = self.current_notebook(notebook.uri)
            return analysis.cell_analysis(uri) if analysis is not None else None
        document = self.workspace.get_text_document(uri)
        cached = self.results.get(uri)
        if cached is not None and cached.version == document.version and cached.text == document.source:
            return cached
        result = self.analyse_now(uri)
        if result is not None:
            self.results[uri] = result
        return result

    def current_notebook(self, uri: str) -> NotebookAnalysis | None:
        """The analysis of the notebook's current cells, computed here if the last one is stale."""
        cached = self.notebook_results.get(unquote(uri))
        if cached is not None and notebook_analysis.is_current(cached.snapshot, self.workspace):
            return cached
        document = self.workspace.get_notebook_document(notebook_uri=uri)
        if document is None:
            return None
        snap = notebook_analysis.snapshot(self.workspace, document)
        path = path_of(uri)
        settings = self.settings_for(path)
        module = analyse(snap.notebook.module, snap.version, path, settings, self.index.context_for(path))
        return self.keep_notebook(notebook_analysis.split(snap, module, path))

    def keep_notebook(self, analysis: NotebookAnalysis) -> NotebookAnalysis:
        self.notebook_results[unquote(analysis.snapshot.uri)] = analysis
        return analysis

    async def project_ready(self) -> None:
        """Rebuild the project off the event loop when the call graph changed (0.3 s for all of
        transformers); what changes meanwhile starts another round."""
        loop = asyncio.get_running_loop()
        self.index.use_settings(self.settings_for(self.index.roots[0] if self.index.roots else None))
        while self.index.stale:
            generation = self.index.generation
            project = await loop.run_in_executor(
                self.executor, workspace_project, self.index.summaries(), self.index.settings
            )
            self.index.set_project(project, generation)

    def shutdown(self) -> None:
        """The end of the process, however it comes (`exit`, stdin closed, SIGTERM): the worker goes too."""
        self.worker.close()
        super().shutdown()


server = GraphmendServer()
