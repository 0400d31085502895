"""The workspace: its index built in the background after `initialized` (with progress), kept
current from saves and the client's file watchers, and, when asked (`closedFiles`), diagnostics of
files that are not open, pushed or returned by `workspace/diagnostic`.

The build uses a pool of processes (one per core, at most four) that exists only while it runs;
files are read from disk in chunks, and only their summaries come back to the server.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterable

from lsprotocol import types
from pygls.uris import from_fs_path

from .. import api
from .state import GraphmendServer, path_of, server
from .worker import ClosedFile, check_closed_files, summarize_files, watch_parent

INDEX_CHUNK = 16  # files per job of the build
MAX_INDEXED_FILES = 20_000  # a workspace folder bigger than this (a home folder, `/`) is indexed in part
WATCHER_ID = "graphmend-python-files"


def workspace_roots(ls: GraphmendServer) -> list[Path]:
    uris = [folder.uri for folder in ls.workspace.folders.values()] or ([ls.workspace.root_uri] if ls.workspace.root_uri else [])
    roots = []
    for uri in uris:
        path = path_of(uri)
        if path is not None and path.is_dir():
            roots.append(Path(os.path.realpath(path)))
    return roots


def start(ls: GraphmendServer) -> None:
    """At `initialized`: watch Python files, then build the index (unless `index` is off)."""
    loop = asyncio.get_running_loop()
    loop.create_task(_register_watchers(ls))
    if not ls.options.index:
        return
    ls.index.roots = workspace_roots(ls)
    if ls.index.roots:
        ls.index_task = loop.create_task(build(ls))


async def _register_watchers(ls: GraphmendServer) -> None:
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern="**/*.py")])
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(id=WATCHER_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
        ]))
    except Exception as error:  # noqa: BLE001 - a client that refuses: saves still update the index
        ls.log(types.MessageType.Info, f"graphmend: file watchers not registered ({error})")


async def build(ls: GraphmendServer) -> None:
    """Summarise every Python file of the workspace folders, with `$/progress` where the client
    shows it; then re-analyse open documents whose context changed."""
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    files, _ = await loop.run_in_executor(ls.executor, api.discover, ls.index.roots)
    names = [str(f) for f in files if f.suffix == ".py"]
    if len(names) > MAX_INDEXED_FILES:
        ls.log(types.MessageType.Warning, f"graphmend: {len(names)} Python files in the workspace; "
                                          f"indexing the first {MAX_INDEXED_FILES}")
        names = names[:MAX_INDEXED_FILES]
    progress = await _begin_progress(ls, len(names))
    pool = _pool()
    try:
        chunks = [names[i : i + INDEX_CHUNK] for i in range(0, len(names), INDEX_CHUNK)]
        jobs = [loop.run_in_executor(pool, summarize_files, chunk, ls.options.overrides) for chunk in chunks]
        done = 0
        for finished in asyncio.as_completed(jobs):
            for name, summary in await finished:
                if ls.index.key(Path(name)) not in ls.index.open:
                    ls.index.update(Path(name), summary, from_open_document=False)
                done += 1
            progress(done)
        ls.index.built = True
        await ls.project_ready()
        elapsed = time.perf_counter() - started
        progress(done, f"{done} files in {elapsed:.1f} s")
        ls.log(types.MessageType.Info, f"graphmend: indexed {done} files in {elapsed:.1f} s")
        ls.refresh_contexts()
        if ls.options.closed_files:
            await analyse_closed(ls, [Path(n) for n in names], pool)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _pool() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=max(1, min(os.cpu_count() or 1, 4)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=watch_parent, initargs=(os.getpid(),))


async def _begin_progress(ls: GraphmendServer, total: int) -> Any:
    """A function reporting how many files are done (and the end, with a message)."""
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return lambda done, message=None: None
    token = f"graphmend-index-{time.monotonic_ns()}"
    try:
        await ls.work_done_progress.create_async(token)
    except Exception:  # noqa: BLE001 - no progress then
        return lambda done, message=None: None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
        title="graphmend: indexing the workspace", message=f"0/{total} files", percentage=0, cancellable=False))
    last = [0]

    def report(done: int, message: str | None = None) -> None:
        if message is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            return
        percentage = done * 100 // max(total, 1)
        if percentage >= last[0] + 5:
            last[0] = percentage
            ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=f"{done}/{total} files", percentage=percentage))

    return report


# ---------------------------------------------------------------------------------------- file changes
@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: GraphmendServer, params: types.DidChangeWatchedFilesParams) -> None:
    paths = {path for change in params.changes if (path := path_of(change.uri)) is not None and path.suffix == ".py"}
    await reindex(ls, [p for p in paths if ls.index.covers(p)])


async def reindex(ls: GraphmendServer, paths: Iterable[Path]) -> None:
    """Summaries of changed (or deleted) files on disk, then contexts checked again."""
    paths = list(paths)
    if not paths or not ls.options.index:
        return
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    found = await loop.run_in_executor(ls.worker(), summarize_files, [str(p) for p in paths], ls.options.overrides)
    changed = False
    for name, summary in found:
        changed |= ls.index.update(Path(name), summary, from_open_document=False)
    await ls.project_ready()
    ls.log(types.MessageType.Log, f"graphmend: re-indexed {len(paths)} file(s) in {(time.perf_counter() - started) * 1000:.0f} ms"
                                  f"{'' if changed else ' (call graph unchanged)'}")
    if changed:
        ls.refresh_contexts()
    if ls.options.closed_files:
        await analyse_closed(ls, paths, None)


# ---------------------------------------------------------------------------------------- closed files
async def analyse_closed(ls: GraphmendServer, paths: list[Path], pool: ProcessPoolExecutor | None) -> None:
    """Diagnostics of the files among `paths` that are not open, each in its project context."""
    await ls.project_ready()
    loop = asyncio.get_running_loop()
    jobs = [(str(p), ls.index.context_for(p)) for p in paths if from_fs_path(str(p)) not in ls.workspace.text_documents]
    chunks = [jobs[i : i + INDEX_CHUNK] for i in range(0, len(jobs), INDEX_CHUNK)]
    runs = [loop.run_in_executor(pool or ls.worker(), check_closed_files, chunk, ls.options.overrides) for chunk in chunks]
    for finished in asyncio.as_completed(runs):
        for closed in await finished:
            publish_closed(ls, closed)


def publish_closed(ls: GraphmendServer, closed: ClosedFile) -> None:
    uri = from_fs_path(closed.path)
    if uri is None or uri in ls.workspace.text_documents:
        return
    items = [ls.to_lsp_closed(uri, closed, index) for index in range(len(closed.diagnostics))]
    if items or uri in ls.closed:
        ls.closed[uri] = (closed.context, items)
        if not ls.pull_mode:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items))
    if not items:
        ls.closed.pop(uri, None)


# ---------------------------------------------------------------------------------------- workspace/diagnostic
@server.feature(types.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostics(ls: GraphmendServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
    """Open documents' current diagnostics, and closed files' when `closedFiles` is on."""
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    for notebook_uri in list(ls.workspace.notebook_documents):
        analysis = ls.current_notebook(notebook_uri)
        for cell in analysis.snapshot.cells if analysis is not None else ():
            found = analysis.cell_analysis(cell.uri)  # type: ignore[union-attr]
            if found is not None:  # under the uri the client gave the cell
                items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=cell.uri, items=ls.to_lsp(cell.uri, found),
                                                                         version=found.version))
    for uri in list(ls.workspace.text_documents):
        if ls.notebook_of(uri) is not None:
            continue  # a notebook cell: above
        result = ls.current(uri)
        if result is not None:
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=ls.to_lsp(uri, result), version=result.version))
    for uri, (_, diagnostics) in list(ls.closed.items()):
        items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=diagnostics, version=None))
    return types.WorkspaceDiagnosticReport(items=items)

