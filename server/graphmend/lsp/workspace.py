"""The workspace: its index built in the background after `initialized` (with progress), kept
current from saves and the client's file watchers; then, when asked (`closedFiles`), diagnostics of
the files that are not open (`closed_files`).

The build uses a pool of processes (`index_pool`) that exists only while it runs; files are read
from disk in chunks, and only their summaries come back to the server.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import api
from . import closed_files, open_documents
from .edit.locations import path_of
from .schedule.worker_pool import FILES_PER_JOB, index_pool
from .session.capabilities import RUNS_FOLDER, WATCHED_FILES, WATCHER_ID
from .session.state import GraphmendServer, server
from .worker import summarize_files

MAX_INDEXED_FILES = 20_000  # a workspace folder bigger than this (a home folder, `/`) is indexed in part


def workspace_roots(ls: GraphmendServer) -> list[Path]:
    uris = [folder.uri for folder in ls.workspace.folders.values()] or (
        [ls.workspace.root_uri] if ls.workspace.root_uri else []
    )
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
    if not ls.client_supports.watched_files_registration:
        return
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=WATCHER_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=WATCHED_FILES
                    )
                ]
            )
        )
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
        ls.log(
            types.MessageType.Warning,
            f"graphmend: {len(names)} Python files in the workspace; indexing the first {MAX_INDEXED_FILES}",
        )
        names = names[:MAX_INDEXED_FILES]
    progress = await _begin_progress(ls, len(names))
    pool = index_pool()
    try:
        chunks = [names[i : i + FILES_PER_JOB] for i in range(0, len(names), FILES_PER_JOB)]
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
        open_documents.refresh_contexts(ls)
        if ls.options.closed_files:
            await closed_files.analyse(ls, [Path(n) for n in names], pool)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


async def _begin_progress(ls: GraphmendServer, total: int) -> Any:
    """A function reporting how many files are done (and the end, with a message)."""
    if not ls.client_supports.work_done_progress:
        return lambda done, message=None: None
    token = f"graphmend-index-{time.monotonic_ns()}"
    try:
        await ls.work_done_progress.create_async(token)
    except Exception:  # noqa: BLE001 - no progress then
        return lambda done, message=None: None
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(
            title="graphmend: indexing the workspace", message=f"0/{total} files", percentage=0, cancellable=False
        ),
    )
    last = [0]

    def report(done: int, message: str | None = None) -> None:
        if message is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            return
        percentage = done * 100 // max(total, 1)
        if percentage >= last[0] + 5:
            last[0] = percentage
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=f"{done}/{total} files", percentage=percentage)
            )

    return report


# ---------------------------------------------------------------------------------------- file changes
@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: GraphmendServer, params: types.DidChangeWatchedFilesParams) -> None:
    changed = [path for change in params.changes if (path := path_of(change.uri)) is not None]
    if any(RUNS_FOLDER in path.as_posix() for path in changed):
        open_documents.runs_changed(ls)
    paths = {path for path in changed if path.suffix == ".py"}
    await reindex(ls, [p for p in paths if ls.index.covers(p)])


async def reindex(ls: GraphmendServer, paths: Iterable[Path]) -> None:
    """Summaries of changed (or deleted) files on disk, then contexts checked again."""
    paths = list(paths)
    if not paths or not ls.options.index:
        return
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    found = await loop.run_in_executor(ls.worker.pool(), summarize_files, [str(p) for p in paths], ls.options.overrides)
    changed = False
    for name, summary in found:
        changed |= ls.index.update(Path(name), summary, from_open_document=False)
    await ls.project_ready()
    ls.log(
        types.MessageType.Log,
        f"graphmend: re-indexed {len(paths)} file(s) in {(time.perf_counter() - started) * 1000:.0f} ms"
        f"{'' if changed else ' (call graph unchanged)'}",
    )
    if changed:
        open_documents.refresh_contexts(ls)
    if ls.options.closed_files:
        await closed_files.analyse(ls, paths, None)
