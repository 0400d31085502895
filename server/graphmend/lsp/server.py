"""`graphmend-lsp`: graphmend in any LSP editor.

Diagnostics are pushed (or pulled, when the client asks for them) for open Python files, computed
off the event loop, debounced per document, and published only for the version they were computed
from. Each diagnostic carries its fix, so code actions need no second analysis. Edits are versioned
`TextDocumentEdit`s where the client supports them: an edit computed for version N is never
applied to version N+1.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__, api
from ..diagnostics import Applicability, Diagnostic, Fix, Severity
from ..fixes import apply_fixes
from ..rules import RULES_BY_CODE
from ..source import Position, Range
from .options import EditorOptions, parse_options
from .protocol import GraphmendProtocol
from .worker import Analysis, analyse, warm_up, watch_parent

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
ANALYSES_PER_WORKER = 200  # then the worker process is replaced, and its memory with it
_IGNORE_COMMENT = re.compile(r"#\s*graphmend:\s*ignore(\[(?P<codes>[^\]]*)\])?")
log = logging.getLogger("graphmend.lsp")


class GraphmendServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("graphmend", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=GraphmendProtocol)
        self.options = EditorOptions()
        self.results: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-commands")
        self._pool: ProcessPoolExecutor | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._analyses = 0
        self.reported_problems: set[str] = set()

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
        return self.options.apply(base)

    def analyse_now(self, uri: str) -> Analysis | None:
        """Analyse the document as it is now (on the calling thread)."""
        document = self.workspace.get_text_document(uri)
        if document.source is None:
            return None
        return analyse(document.source, document.version, _path(uri), self.settings_for(_path(uri)))

    def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version, computing it if needed; None for a
        document the client has not opened (nothing is read from disk behind the editor's back:
        the path may not exist, or be a FIFO that would block)."""
        if uri not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        cached = self.results.get(uri)
        if cached is not None and cached.version == document.version and cached.text == document.source:
            return cached
        result = self.analyse_now(uri)
        if result is not None:
            self.results[uri] = result
        return result

    def schedule(self, uri: str, delay_ms: int = 0) -> None:
        """(Re)start the analysis of a document; an older pending run for it is dropped."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._run(uri, delay_ms))

    async def _run(self, uri: str, delay_ms: int) -> None:
        try:
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            document = self.workspace.get_text_document(uri)
            text, version = document.source, document.version
            path = _path(uri)
            settings = self.settings_for(path)
            if api.too_large(text, settings):
                result = analyse(text, version, path, settings)  # refused at once: the text never goes to the worker
            else:
                result = await self.analyse_in_worker(text, version, path, settings)
            latest = self.workspace.get_text_document(uri)
            if latest.version != version or latest.source != text or uri not in self.workspace.text_documents:
                return  # the document moved on (or closed): a newer run will publish
            self.results[uri] = result
            if self.pull_mode:
                self._refresh_pull()
            else:
                self.publish(uri, result)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001 - keep the previous diagnostics and keep serving
            self.report_server_error(error, None)
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    def worker(self) -> ProcessPoolExecutor:
        """The analysis worker, started (and warmed: graphmend imported, one tiny analysis run) if
        none is running."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=watch_parent, initargs=(os.getpid(),))
            self._analyses = 0
            self._pool.submit(warm_up)
        return self._pool

    async def analyse_in_worker(self, text: str, version: int | None, path: Path | None, settings: api.Settings) -> Analysis:
        """Analyse in the worker process; if it died (killed, out of memory), start a new one and
        analyse this document on a thread meanwhile, so the editor still gets its diagnostics."""
        loop = asyncio.get_running_loop()
        pool = self.worker()
        try:
            future = loop.run_in_executor(pool, analyse, text, version, path, settings)
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
            return await loop.run_in_executor(self.executor, analyse, text, version, path, settings)

    def shutdown(self) -> None:
        """The end of the process, however it comes (`exit`, stdin closed, SIGTERM): the worker goes too."""
        self.close_worker()
        super().shutdown()

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
        related = None
        if self.related_information and diagnostic.related:
            related = [
                types.DiagnosticRelatedInformation(types.Location(uri, self.to_range(uri, result.lines, r.range)), r.message)
                for r in diagnostic.related
            ]
        data: dict[str, Any] = {"uri": uri, "version": result.version, "index": index, **diagnostic.data}
        if diagnostic.fix is not None:  # precomputed with the diagnostic, in the client's position units
            data["fix"] = {
                "title": diagnostic.fix.title,
                "applicability": diagnostic.fix.applicability.value,
                "edits": [
                    {"range": _range_json(self.to_range(uri, result.lines, e.range)), "newText": e.new_text}
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

    def workspace_edit(self, uri: str, result: Analysis, fix: Fix) -> types.WorkspaceEdit:
        edits = [types.TextEdit(self.to_range(uri, result.lines, e.range), e.new_text) for e in fix.edits]
        return self._edit(uri, result.version, edits)

    def _edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        if self.versioned_edits:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(identifier, edits)])
        return types.WorkspaceEdit(changes={uri: edits})

    def whole_document_edit(self, uri: str, result: Analysis, new_text: str) -> types.WorkspaceEdit:
        last = len(result.lines) - 1
        end = Position(last, len(result.lines[last]))
        whole = self.to_range(uri, result.lines, Range(Position(0, 0), end))
        return self._edit(uri, result.version, [types.TextEdit(whole, new_text)])


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


server = GraphmendServer()


# ---------------------------------------------------------------------------------------- lifecycle
@server.feature(types.INITIALIZE)
def initialize(ls: GraphmendServer, params: types.InitializeParams) -> None:
    ls.options = parse_options(params.initialization_options)


@server.feature(types.INITIALIZED)
def initialized(ls: GraphmendServer, params: types.InitializedParams) -> None:
    """Start the worker now, so the first didOpen does not pay its start-up; with no document
    opened within the idle time it stops again."""
    ls.worker()
    ls.documents_changed()


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
    else:
        ls.schedule(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GraphmendServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.results.pop(uri, None)
    if not ls.pull_mode:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.documents_changed()


@server.feature(types.SHUTDOWN)
def shutdown(ls: GraphmendServer, *args: Any) -> None:
    ls.close_worker()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GraphmendServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if not settings:
        try:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="graphmend")])
            )
            settings = answer[0] if answer else None
        except Exception:  # noqa: BLE001 - a client without workspace/configuration
            settings = None
    ls.options = parse_options(settings)
    ls.reported_problems.clear()
    for uri in list(ls.workspace.text_documents):
        ls.schedule(uri)


# ---------------------------------------------------------------------------------------- pull diagnostics
@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False),
)
async def pull_diagnostics(ls: GraphmendServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    uri = params.text_document.uri
    if uri not in ls.workspace.text_documents:
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # closed: nothing to show
    pending = ls.pending.get(uri)
    if pending is not None:
        try:
            await asyncio.shield(pending)
        except asyncio.CancelledError:
            pass
    result = ls.current(uri)
    if result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{result.version}:{hash((result.text, result.settings))}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.to_lsp(uri, result), result_id=result_id)


# ---------------------------------------------------------------------------------------- code actions
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
        resolve_provider=True,
    ),
)
def code_actions(ls: GraphmendServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    result = ls.current(uri)
    if result is None:
        return []
    only = params.context.only
    wants_quick_fix = not only or any(k.startswith(types.CodeActionKind.QuickFix.value) for k in only)
    wants_fix_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
    start = ls.from_position(uri, result.lines, params.range.start)
    end = ls.from_position(uri, result.lines, params.range.end)
    actions: list[types.CodeAction] = []
    if wants_quick_fix:
        for index, diagnostic in enumerate(result.diagnostics):
            if diagnostic.range.end < start or diagnostic.range.start > end:
                continue
            lsp_diagnostic = ls.to_lsp_diagnostic(uri, result, index)
            if diagnostic.fix is not None:
                actions.append(_quick_fix(ls, uri, result, index, lsp_diagnostic))
            ignore = _ignore_action(ls, uri, result, diagnostic, lsp_diagnostic)
            if ignore is not None:
                actions.append(ignore)
    if wants_fix_all and any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in result.diagnostics):
        action = types.CodeAction(title="graphmend: apply all safe fixes", kind=FIX_ALL_KIND,
                                  data={"uri": uri, "version": result.version, "fixAll": True})
        actions.append(action if ls.lazy_code_actions else _resolve(ls, action))
    return actions


def _quick_fix(ls: GraphmendServer, uri: str, result: Analysis, index: int, lsp_diagnostic: types.Diagnostic) -> types.CodeAction:
    fix = result.diagnostics[index].fix
    assert fix is not None
    action = types.CodeAction(
        title=f"graphmend: {fix.title}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic],
        is_preferred=fix.applicability is Applicability.SAFE,
        data={"uri": uri, "version": result.version, "index": index},
    )
    return action if ls.lazy_code_actions else _resolve(ls, action)


def _ignore_action(
    ls: GraphmendServer, uri: str, result: Analysis, diagnostic: Diagnostic, lsp_diagnostic: types.Diagnostic
) -> types.CodeAction | None:
    """`# graphmend: ignore[CODE]` at the end of the diagnostic's first line (merged with an existing one)."""
    if diagnostic.code == "GM001":
        return None
    line_number = diagnostic.range.start.line
    line = result.lines[line_number]
    match = _IGNORE_COMMENT.search(line)
    if match is not None and match.group("codes") is None:
        return None  # already ignores everything
    if match is not None:
        codes = [c.strip() for c in (match.group("codes") or "").split(",") if c.strip()]
        new_comment = f"# graphmend: ignore[{', '.join([*codes, diagnostic.code])}]"
        edit_range = Range(Position(line_number, match.start()), Position(line_number, match.end()))
    else:
        content = line.rstrip()
        new_comment = f"  # graphmend: ignore[{diagnostic.code}]"
        edit_range = Range(Position(line_number, len(content)), Position(line_number, len(line)))
    text_edit = types.TextEdit(ls.to_range(uri, result.lines, edit_range), new_comment)
    return types.CodeAction(
        title=f"graphmend: ignore {diagnostic.code} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic],
        edit=ls._edit(uri, result.version, [text_edit]),
    )


@server.feature(types.CODE_ACTION_RESOLVE)
def resolve_code_action(ls: GraphmendServer, action: types.CodeAction) -> types.CodeAction:
    return _resolve(ls, action)


def _resolve(ls: GraphmendServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri, version = data.get("uri"), data.get("version")
    if uri is None:
        return action
    result = ls.results.get(uri)
    if result is None or result.version != version:
        result = ls.current(uri)
        if result is None or result.version != version:
            action.disabled = types.CodeActionDisabled(reason="the document changed; ask for the fix again")
            return action
    if data.get("fixAll"):
        # One round over the fixes already computed with the diagnostics: no re-analysis, so the
        # lightbulb stays instant. (The applyAllFixes command repeats rounds until nothing changes.)
        safe = [d.fix for d in result.diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE]
        fixed_text, applied = apply_fixes(result.text, safe)
        if applied and fixed_text != result.text:
            action.edit = ls.whole_document_edit(uri, result, fixed_text)
        return action
    index = data.get("index")
    if isinstance(index, int) and 0 <= index < len(result.diagnostics) and result.diagnostics[index].fix is not None:
        action.edit = ls.workspace_edit(uri, result, result.diagnostics[index].fix)  # type: ignore[arg-type]
    return action


# ---------------------------------------------------------------------------------------- hover
@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: GraphmendServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    result = ls.current(uri)
    if result is None:
        return None
    position = ls.from_position(uri, result.lines, params.position)
    for diagnostic in result.diagnostics:
        if diagnostic.range.start <= position <= diagnostic.range.end and diagnostic.code in RULES_BY_CODE:
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=_hover_text(diagnostic, result)),
                range=ls.to_range(uri, result.lines, diagnostic.range),
            )
    return None


def _section(doc: str, title: str) -> str:
    match = re.search(rf"{re.escape(title)}:\s*(.*?)(?:\n\s*\n|\Z)", doc, re.DOTALL)
    return " ".join(match.group(1).split()) if match else ""


def _hover_text(diagnostic: Diagnostic, result: Analysis) -> str:
    rule = RULES_BY_CODE[diagnostic.code]
    doc = rule.__doc__ or ""
    parts = [f"**{rule.code}** `{rule.name}` — Dynamo: *{rule.reason}*", "", _section(doc, "Why it breaks the graph")]
    for related in diagnostic.related:
        parts += ["", f"Compiled because: {related.message}."]
    if diagnostic.fix is not None:
        parts += ["", f"**Fix** ({diagnostic.fix.applicability.value}): {diagnostic.fix.title}"]
        main_edit = diagnostic.fix.edits[-1]
        preview = main_edit.new_text.strip("\n").splitlines()
        if len(preview) > 12:
            preview = [*preview[:12], "..."]
        parts += ["```python", *_dedent(preview), "```"]
    elif "no automatic fix" in diagnostic.message:
        parts += ["", f"No automatic fix: {diagnostic.data.get('no_fix', '')}"]
    else:
        parts += ["", f"Fix: {_section(doc, 'Fix and its safety')}"]
    if diagnostic.url:
        parts += ["", f"[Dynamo's explanation ({diagnostic.reason_id})]({diagnostic.url})"]
    return "\n".join(parts)


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


# ---------------------------------------------------------------------------------------- commands
@server.command(COMMAND_FIX_ALL)
async def apply_all_fixes(ls: GraphmendServer, *arguments: Any) -> dict[str, Any]:
    """Apply every safe fix in the file (the argument is the document URI), through workspace/applyEdit."""
    uri = _uri_argument(arguments)
    result = ls.current(uri) if uri else None
    if result is None:
        return {"applied": 0}
    fixed = api.fix_source(result.text, _path(uri), result.settings, unsafe=False)  # type: ignore[arg-type]
    if fixed.error is not None or fixed.fixed == result.text:
        return {"applied": 0, "error": fixed.error}
    answer = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=ls.whole_document_edit(uri, result, fixed.fixed), label="graphmend: fix all")  # type: ignore[arg-type]
    )
    return {"applied": fixed.applied if answer.applied else 0}


@server.command(COMMAND_SHOW_DIFF)
def show_fix_diff(ls: GraphmendServer, *arguments: Any) -> str:
    """The rewrite of the whole file (safe fixes; `unsafe` as second argument for all) as a unified diff."""
    uri = _uri_argument(arguments)
    result = ls.current(uri) if uri else None
    if result is None:
        return ""
    unsafe = len(arguments) > 1 and bool(arguments[1])
    fixed = api.fix_source(result.text, _path(uri), result.settings, unsafe=unsafe)  # type: ignore[arg-type]
    name = Path(_path(uri) or "file.py").name  # type: ignore[arg-type]
    return "".join(difflib.unified_diff(result.text.splitlines(True), fixed.fixed.splitlines(True), f"a/{name}", f"b/{name}"))


@server.command(COMMAND_VERIFY)
async def verify_function(ls: GraphmendServer, *arguments: Any) -> str:
    """Run `graphmend verify` on the saved file: arguments (uri, entry, [inputs, ...]). Executes the file."""
    uri = _uri_argument(arguments)
    path = _path(uri) if uri else None
    if path is None or len(arguments) < 3:
        return "graphmend.verify needs (uri, entry, [inputs...])"
    from ..verify import VerifyError, verify

    entry, inputs = str(arguments[1]), [str(i) for i in arguments[2]]
    loop = asyncio.get_running_loop()
    try:
        report = await loop.run_in_executor(ls.executor, verify, path, entry, inputs, ls.settings_for(path), False)
    except (VerifyError, api.SourceError) as error:
        return f"graphmend verify: {error}"
    return report.table()


def _uri_argument(arguments: tuple[Any, ...]) -> str | None:
    if not arguments:
        return None
    first = arguments[0]
    if isinstance(first, list) and first:  # some clients wrap the arguments in a list
        first = first[0]
    if isinstance(first, dict):
        first = first.get("uri")
    return first if isinstance(first, str) else None
