"""Closed files' diagnostics (the `closedFiles` option): each file of the workspace that is not
open, analysed in the worker in its project context, pushed or kept for `workspace/diagnostic`;
analysed again when the index changes it, or when its context changes."""

from __future__ import annotations

import asyncio
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from .edit.diagnostics import closed_file_diagnostics
from .edit.locations import path_of
from .schedule.worker_pool import FILES_PER_JOB
from .session.state import GraphmendServer
from .worker import ClosedFile, check_closed_files


async def analyse(ls: GraphmendServer, paths: list[Path], pool: ProcessPoolExecutor | None) -> None:
    """Diagnostics of the files among `paths` that are not open, each in its project context, in
    `pool` (the index build's) or else the worker."""
    await ls.project_ready()
    loop = asyncio.get_running_loop()
    jobs = [(str(p), ls.index.context_for(p)) for p in paths if from_fs_path(str(p)) not in ls.workspace.text_documents]
    chunks = [jobs[i : i + FILES_PER_JOB] for i in range(0, len(jobs), FILES_PER_JOB)]
    runs = [
        loop.run_in_executor(pool or ls.worker.pool(), check_closed_files, chunk, ls.options.overrides)
        for chunk in chunks
    ]
    for finished in asyncio.as_completed(runs):
        for closed in await finished:
            _publish(ls, closed)


async def refresh(ls: GraphmendServer) -> None:
    """Analyse again the closed files with diagnostics whose project context changed."""
    stale = [
        path
        for uri, (context, _) in ls.closed_diagnostics.items()
        if (path := path_of(uri)) is not None and ls.index.context_for(path) != context
    ]
    await analyse(ls, stale, None)


def _publish(ls: GraphmendServer, closed: ClosedFile) -> None:
    uri = from_fs_path(closed.path)
    if uri is None or uri in ls.workspace.text_documents:
        return
    items = closed_file_diagnostics(uri, closed, ls.workspace.position_codec, ls.client_supports.related_information)
    if items or uri in ls.closed_diagnostics:
        ls.closed_diagnostics[uri] = (closed.context, items)
        if not ls.client_supports.pull_diagnostics:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items))
    if not items:
        ls.closed_diagnostics.pop(uri, None)
