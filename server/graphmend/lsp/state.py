"""The server's state: open documents' analyses, the analysis worker, options, conversions to LSP.

Diagnostics are pushed (or pulled, when the client asks for them) for open Python files, computed
off the event loop, debounced per document, and published only for the version they were computed
from. Each diagnostic carries its fix, so code actions need no second analysis. Edits are versioned
`TextDocumentEdit`s where the client supports them: an edit computed for version N is never
applied to version N+1. The handlers live in one module per concern (`lifecycle`, `documents`,
`pull`, `code_actions`, `hover`, `commands`); `server.py` gathers them.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__, api
from ..diagnostics import Diagnostic, Fix, Severity
from ..source import Position, Range, SourceText
from . import notebook_analysis
from .index import WorkspaceIndex, build_project
from .notebook_analysis import NotebookAnalysis
from .options import EditorOptions
from .protocol import GraphmendProtocol
from .worker import Analysis, ClosedFile, analyse, warm_up, watch_parent

SOURCE = "graphmend"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.graphmend"
COMMAND_FIX_ALL = "graphmend.applyAllFixes"
COMMAND_SHOW_DIFF = "graphmend.showFixDiff"
COMMAND_VERIFY = "graphmend.verify"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
}
# Jupyter notebooks' Python cells are synced as notebook documents (LSP 3.17), saves included.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook=types.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook"),
        cells=[types.NotebookCellLanguage(language="python")])],
    save=True,
)
ANALYSES_PER_WORKER = 200  # then the worker process is replaced, and its memory with it
REFRESH_DELAY_S = 0.2  # after a change to the call graph, other documents' contexts are checked this much later
SUMMARY_DELAY_S = 0.5  # an edited document's summary is taken once the editor pauses this long
SUMMARY_IN_SERVER_MAX_CHARS = 512_000  # summaries of larger documents are taken in the worker
log = logging.getLogger("graphmend.lsp")


class GraphmendServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("graphmend", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=GraphmendProtocol, notebook_document_sync=NOTEBOOK_SYNC)
        self.options = EditorOptions()
        self.results: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-commands")
        self._pool: ProcessPoolExecutor | None = None
        self._warm: Future[None] | None = None  # the worker's start-up: done once it can analyse
        self._idle: asyncio.TimerHandle | None = None
        self._analyses = 0
        self.reported_problems: set[str] = set()
        self.index = WorkspaceIndex()
        self.index_task: asyncio.Task[None] | None = None
        self.closed: dict[str, tuple[api.ProjectContext, list[types.Diagnostic]]] = {}  # closed files' diagnostics
        self._refresh: asyncio.Task[None] | None = None
        self._summaries: dict[str, asyncio.Task[None]] = {}  # pending summaries of open documents
        self.notebook_results: dict[str, NotebookAnalysis] = {}  # notebook uri → its analysis, split by cell

    # ------------------------------------------------------------------ errors and logging
    def report_server_error(self, error: Exception, source: Any) -> None:
        """A handler crash goes to the client's log, never to a modal error; the server keeps serving."""
        log.exception("graphmend-lsp internal error", exc_info=error)
        self.log(types.MessageType.Error, f"graphmend internal error: {type(error).__name__}: {error}")

    def log(self, kind: types.MessageType, message: str) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001 - no transport (tests, shutdown): logging must not fail
            log.warning(message)

    def report_once(self, message: str) -> None:
        if message not in self.reported_problems:
            self.reported_problems.add(message)
            self.log(types.MessageType.Warning, message)

    # ------------------------------------------------------------------ capabilities of the client
    @property
    def pull_mode(self) -> bool:
        """The client pulls diagnostics itself (LSP 3.17): then we do not push them too."""
        text_document = self.client_capabilities.text_document
        return bool(text_document and text_document.diagnostic is not None)

    @property
    def versioned_edits(self) -> bool:
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.workspace_edit and workspace.workspace_edit.document_changes)

    @property
    def related_information(self) -> bool:
        text_document = self.client_capabilities.text_document
        publish = text_document.publish_diagnostics if text_document else None
        return bool(publish and publish.related_information)

    @property
    def lazy_code_actions(self) -> bool:
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document else None
        resolve = code_action.resolve_support if code_action else None
        return bool(resolve and "edit" in resolve.properties)

    # ------------------------------------------------------------------ analysis
    def settings_for(self, path: Path | None) -> api.Settings:
        base = api.Settings()
        if path is not None:
            try:
                base = api.settings_for(path)  # re-read every time: pyproject edits apply at once
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

    def schedule(self, uri: str, delay_ms: int = 0) -> None:
        """(Re)start the analysis of a document; an older pending run for it is dropped. A notebook
        cell's is its notebook's, keyed by the notebook's uri."""
        notebook = self.notebook_of(uri)
        if notebook is not None or uri in self.workspace.notebook_documents:
            key = notebook.uri if notebook is not None else uri
            _restart(self.pending, key, self._pending(key, delay_ms, self._analyse_notebook))
            return
        _restart(self.pending, uri, self._pending(uri, delay_ms, self._analyse_document))

    def is_open(self, uri: str) -> bool:
        """Whether the client has the document open; pygls keys documents by the unquoted uri,
        while clients send it quoted (`%3D` in a notebook cell's fragment, `%20` in a path)."""
        return unquote(uri) in self.workspace.text_documents

    def analysis_key(self, uri: str) -> str:
        """The key of a document's pending analysis: a cell's is its notebook's."""
        notebook = self.notebook_of(uri)
        return notebook.uri if notebook is not None else uri

    # ------------------------------------------------------------------ notebooks
    def notebook_of(self, uri: str) -> types.NotebookDocument | None:
        """The notebook a cell's text document belongs to; None for a file."""
        return self.workspace.get_notebook_document(cell_uri=uri)

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
        return self._keep_notebook(notebook_analysis.split(snap, module, path))

    def _keep_notebook(self, analysis: NotebookAnalysis) -> NotebookAnalysis:
        self.notebook_results[unquote(analysis.snapshot.uri)] = analysis
        return analysis

    async def _analyse_notebook(self, uri: str) -> None:
        document = self.workspace.get_notebook_document(notebook_uri=uri)
        if document is None:
            return
        snap = notebook_analysis.snapshot(self.workspace, document)
        path = path_of(uri)
        module = await self._analysis(snap.notebook.module, snap.version, path, self.settings_for(path))
        if not notebook_analysis.is_current(snap, self.workspace):
            return  # a cell moved on (or the notebook closed): a newer run will publish
        analysis = self._keep_notebook(notebook_analysis.split(snap, module, path))
        if self.pull_mode:
            self._refresh_pull()
        else:
            for cell in snap.cells:
                result = analysis.cell_analysis(cell.uri)
                if result is not None:
                    self.publish(cell.uri, result)

    def forget_notebook(self, uri: str, cell_uris: list[str]) -> None:
        """A closed notebook: its pending run, its results and its cells' diagnostics go."""
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.notebook_results.pop(unquote(uri), None)
        for cell_uri in cell_uris:
            if not self.pull_mode:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))

    async def _pending(self, uri: str, delay_ms: int, work: Callable[[str], Awaitable[None]]) -> None:
        """A document's pending analysis: after the debounce, `work`; a failure keeps the previous
        diagnostics and the server serving."""
        try:
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            await work(uri)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001
            self.report_server_error(error, None)
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    async def _analysis(self, text: str, version: int | None, path: Path | None, settings: api.Settings) -> Analysis:
        """A text's analysis in the worker, with the project's context; one over the size limit is
        refused at once, and its text never goes to the worker."""
        if api.too_large(text, settings):
            return analyse(text, version, path, settings)
        await self.project_ready()
        return await self.analyse_in_worker(text, version, path, settings, self.index.context_for(path))

    async def _analyse_document(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        path = path_of(uri)
        result = await self._analysis(text, version, path, self.settings_for(path))
        latest = self.workspace.get_text_document(uri)
        if latest.version != version or latest.source != text or not self.is_open(uri):
            return  # the document moved on (or closed): a newer run will publish
        self.results[uri] = result
        if path is not None:  # what this file calls or compiles, for the other files (at once when it is new)
            self.summarize_later(uri, 0 if self.index.key(path) not in self.index.open else SUMMARY_DELAY_S)
        if self.pull_mode:
            self._refresh_pull()
        else:
            self.publish(uri, result)

    def worker(self) -> ProcessPoolExecutor:
        """The analysis worker, started (and warmed: graphmend imported, one tiny analysis run) if
        none is running."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=watch_parent, initargs=(os.getpid(),))
            self._analyses = 0
            self._warm = self._pool.submit(warm_up)
        return self._pool

    async def analyse_in_worker(self, text: str, version: int | None, path: Path | None, settings: api.Settings,
                                context: api.ProjectContext = api.ProjectContext(), summarize: bool = False) -> Analysis:
        """Analyse in the worker process; if it died (killed, out of memory), start a new one and
        analyse this document on a thread meanwhile, so the editor still gets its diagnostics."""
        loop = asyncio.get_running_loop()
        pool = self.worker()
        if self._warm is not None and not self._warm.done():
            # The worker is still starting (the first document right after `initialized`): do
            # not wait for it, analyse here this once.
            return await loop.run_in_executor(self.executor, analyse, text, version, path, settings, context, summarize)
        try:
            future = loop.run_in_executor(pool, analyse, text, version, path, settings, context, summarize)
            self._analyses += 1
            if self._analyses >= ANALYSES_PER_WORKER:
                # Replace the worker: what is already submitted still finishes on the old one
                # (Python's own max_tasks_per_child can hang a queued task in 3.11, so it is not used).
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=False)
            return await future
        except BrokenProcessPool:
            self.log(types.MessageType.Warning, "graphmend: the analysis worker stopped; starting a new one")
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            return await loop.run_in_executor(self.executor, analyse, text, version, path, settings, context, summarize)

    def shutdown(self) -> None:
        """The end of the process, however it comes (`exit`, stdin closed, SIGTERM): the worker goes too."""
        self.close_worker()
        super().shutdown()

    # ------------------------------------------------------------------ the workspace index
    async def project_ready(self) -> None:
        """Rebuild the project off the event loop when the call graph changed (0.3 s for all of
        transformers); what changes meanwhile starts another round."""
        loop = asyncio.get_running_loop()
        while self.index.stale:
            generation = self.index.generation
            project = await loop.run_in_executor(self.executor, build_project, self.index.summaries())
            self.index.set_project(project, generation)

    def summarize_later(self, uri: str, delay_s: float = SUMMARY_DELAY_S) -> None:
        """Once the editor pauses, the document's summary for the workspace index (what it calls
        and compiles matters to other files, not to the keystroke being analysed)."""
        _restart(self._summaries, uri, self._summarize(uri, delay_s))

    async def _summarize(self, uri: str, delay_s: float) -> None:
        try:
            await asyncio.sleep(delay_s)
            if not self.is_open(uri):
                return
            document = self.workspace.get_text_document(uri)
            path = path_of(uri)
            if path is None:
                return
            text = document.source
            # On a thread of the server, beside the worker, so that it never delays the analysis
            # of the next document opened; a large text goes to the worker (memory stays there).
            runner = self.executor if len(text) <= SUMMARY_IN_SERVER_MAX_CHARS else self.worker()
            summary = await asyncio.get_running_loop().run_in_executor(
                runner, api.summarize_source, text, path, self.settings_for(path))
            if self.is_open(uri) and self.workspace.get_text_document(uri).source == text:
                if self.index.update(path, summary, from_open_document=True):
                    self.refresh_contexts()
        except asyncio.CancelledError:
            pass
        except BrokenProcessPool:
            pass  # the worker was replaced: the next edit asks again
        except Exception as error:  # noqa: BLE001
            self.report_server_error(error, None)
        finally:
            if self._summaries.get(uri) is asyncio.current_task():
                del self._summaries[uri]

    def refresh_contexts(self) -> None:
        """Soon (edits come in bursts), re-analyse the open documents whose project context changed."""
        if self._refresh is not None:
            self._refresh.cancel()
        self._refresh = asyncio.get_running_loop().create_task(self._refresh_contexts())

    async def _refresh_contexts(self) -> None:
        try:
            await asyncio.sleep(REFRESH_DELAY_S)
            await self.project_ready()
            for uri in list(self.workspace.text_documents):
                result = self.results.get(uri)
                if result is not None and result.context != self.index.context_for(path_of(uri)) and uri not in self.pending:
                    self.schedule(uri)
            if self.options.closed_files and self.index.built:
                from .workspace import (
                    analyse_closed,  # the workspace module builds on this one
                )

                stale = [path for path in (path_of(uri) for uri, (context, _) in self.closed.items())
                         if path is not None and self.index.context_for(path) != self.closed[from_fs_path(str(path))][0]]
                await analyse_closed(self, stale, None)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001
            self.report_server_error(error, None)

    def close_worker(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def documents_changed(self) -> None:
        """With no document open, stop the worker after a while: an editor session with no Python
        file open holds no analysis memory; the next open starts a fresh worker."""
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if not self.workspace.text_documents:
            self._idle = asyncio.get_running_loop().call_later(self.options.worker_idle_s, self._stop_if_idle)

    def _stop_if_idle(self) -> None:
        self._idle = None
        if not self.workspace.text_documents:
            self.close_worker()

    def _refresh_pull(self) -> None:
        workspace = self.client_capabilities.workspace
        if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def publish(self, uri: str, result: Analysis) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=result.version, diagnostics=self.to_lsp(uri, result))
        )

    # ------------------------------------------------------------------ conversions
    def codec(self, uri: str) -> Any:
        return self.workspace.get_text_document(uri).position_codec

    def to_range(self, uri: str, lines: list[str], r: Range) -> types.Range:
        return self.codec(uri).range_to_client_units(
            lines, types.Range(types.Position(r.start.line, r.start.character), types.Position(r.end.line, r.end.character))
        )

    def from_position(self, uri: str, lines: list[str], position: types.Position) -> Position:
        converted = self.codec(uri).position_from_client_units(lines, position)
        return Position(converted.line, converted.character)

    def to_lsp(self, uri: str, result: Analysis) -> list[types.Diagnostic]:
        return [self.to_lsp_diagnostic(uri, result, index) for index in range(len(result.diagnostics))]

    def to_lsp_diagnostic(self, uri: str, result: Analysis, index: int) -> types.Diagnostic:
        diagnostic = result.diagnostics[index]
        related = self._related(uri, result.lines, diagnostic)
        data: dict[str, Any] = {"uri": uri, "version": result.version, "index": index, **diagnostic.data}
        if diagnostic.fix is not None:  # precomputed with the diagnostic, in the client's position units
            data["fix"] = {
                "title": diagnostic.fix.title,
                "applicability": diagnostic.fix.applicability.value,
                "edits": [
                    {"range": range_json(self.to_range(uri, result.lines, e.range)), "newText": e.new_text}
                    for e in diagnostic.fix.edits
                ],
            }
        return types.Diagnostic(
            range=self.to_range(uri, result.lines, diagnostic.range),
            message=diagnostic.message,
            severity=_SEVERITY[diagnostic.severity],
            code=diagnostic.code,
            source=SOURCE,
            code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
            related_information=related,
            data=data,
        )

    def to_lsp_closed(self, uri: str, closed: ClosedFile, index: int) -> types.Diagnostic:
        """A closed file's diagnostic: positions in the client's units from the lines it touches."""
        diagnostic = closed.diagnostics[index]
        codec = self.workspace.position_codec
        lines = _Lines(closed.lines)
        return types.Diagnostic(
            range=codec.range_to_client_units(lines, _lsp_range(diagnostic.range)),
            message=diagnostic.message,
            severity=_SEVERITY[diagnostic.severity],
            code=diagnostic.code,
            source=SOURCE,
            code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
            related_information=self._related(uri, lines, diagnostic),
            data={"uri": uri, **diagnostic.data},
        )

    def _related(self, uri: str, lines: Any, diagnostic: Diagnostic) -> list[types.DiagnosticRelatedInformation] | None:
        """Related locations; one in another file keeps its positions in code points (its lines
        are not at hand; they differ from UTF-16 only after non-ASCII text on the line)."""
        if not (self.related_information and diagnostic.related):
            return None
        found = []
        for related in diagnostic.related:
            if related.path is None:
                location = types.Location(uri, self.workspace.position_codec.range_to_client_units(lines, _lsp_range(related.range)))
            else:
                location = types.Location(from_fs_path(related.path) or related.path, _lsp_range(related.range))
            found.append(types.DiagnosticRelatedInformation(location, related.message))
        return found

    def workspace_edit(self, uri: str, result: Analysis, fix: Fix) -> types.WorkspaceEdit:
        edits = [types.TextEdit(self.to_range(uri, result.lines, e.range), e.new_text) for e in fix.edits]
        return self._edit(uri, result.version, edits)

    def _edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        if self.versioned_edits:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(identifier, edits)])
        return types.WorkspaceEdit(changes={uri: edits})

    def cells_edit(self, analysis: NotebookAnalysis, changed: dict[notebook_analysis.Cell, str]) -> types.WorkspaceEdit:
        """Each changed cell's new text, as one edit per cell document (at the version analysed)."""
        edits: list[tuple[str, int | None, list[types.TextEdit]]] = []
        for cell, text in sorted(changed.items(), key=lambda item: item[0].number):
            kept = analysis.cell_analysis(cell.uri)
            lines = kept.lines if kept is not None else SourceText(cell.text).lines
            last = len(lines) - 1
            whole = self.to_range(cell.uri, lines, Range(Position(0, 0), Position(last, len(lines[last]))))
            edits.append((cell.uri, cell.version, [types.TextEdit(whole, text)]))
        if self.versioned_edits:
            return types.WorkspaceEdit(document_changes=[
                types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), text_edits)
                for uri, version, text_edits in edits])
        return types.WorkspaceEdit(changes={uri: text_edits for uri, _, text_edits in edits})

    def whole_document_edit(self, uri: str, result: Analysis, new_text: str) -> types.WorkspaceEdit:
        last = len(result.lines) - 1
        end = Position(last, len(result.lines[last]))
        whole = self.to_range(uri, result.lines, Range(Position(0, 0), end))
        return self._edit(uri, result.version, [types.TextEdit(whole, new_text)])


class _Lines(dict):  # type: ignore[type-arg]
    """Some lines of a file by number: enough for the position codec on those lines."""

    def __getitem__(self, line: int) -> str:
        return self.get(line, "")


def _restart(tasks: dict[str, asyncio.Task[None]], uri: str, work: Coroutine[Any, Any, None]) -> None:
    """Run `work` as the document's task in `tasks`, cancelling the one it replaces."""
    previous = tasks.pop(uri, None)
    if previous is not None:
        previous.cancel()
    tasks[uri] = asyncio.get_running_loop().create_task(work)


def _lsp_range(r: Range) -> types.Range:
    return types.Range(types.Position(r.start.line, r.start.character), types.Position(r.end.line, r.end.character))


def range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


server = GraphmendServer()
