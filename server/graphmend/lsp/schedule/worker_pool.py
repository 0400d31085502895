"""The processes analyses run in, off the event loop: the analysis worker, which lives while
documents are open, and the index build's pool, which lives while the build runs. Both end with
the server, however it ends (`watch_parent`)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ... import api
from ..worker import Analysis, analyse, analyse_in_worker, index_worker_init, warm_up, watch_parent

ANALYSES_PER_WORKER = 200  # then the worker process is replaced, and its memory with it
FILES_PER_JOB = 16  # files per job of the index build or of closed files' analysis


class OpenDocumentsIdle:
    """An event set while no open document is being analysed: the index build's processes wait
    for it before each file (`worker.index_worker_init`), so an edit's analysis does not share the
    CPU with the index but for the file in hand. Niceness alone left Longformer's didChange at 3x
    its time at rest on a 2-core machine (`benchmarks/lsp_latency.py --workspace`)."""

    def __init__(self) -> None:
        self.event = multiprocessing.get_context("spawn").Event()
        self.event.set()
        self._running = 0

    def __enter__(self) -> None:
        self._running += 1
        self.event.clear()

    def __exit__(self, *exc: object) -> None:
        self._running -= 1
        if self._running == 0:
            self.event.set()


_idle: OpenDocumentsIdle | None = None


def open_documents_idle() -> OpenDocumentsIdle:
    """The server's one such event, made when first needed (it is a process-shared semaphore)."""
    global _idle
    if _idle is None:
        _idle = OpenDocumentsIdle()
    return _idle


class AnalysisWorker:
    """One worker process, started on demand and warmed up (graphmend imported, one tiny analysis
    run); replaced after ANALYSES_PER_WORKER analyses, or when it died; stopped when idle."""

    def __init__(self, fallback: ThreadPoolExecutor, warn: Callable[[str], None]) -> None:
        self._fallback = fallback  # where an analysis runs while the worker cannot take it
        self._warn = warn
        self._pool: ProcessPoolExecutor | None = None
        self._warm: Future[None] | None = None  # the worker's start-up: done once it can analyse
        self._analyses = 0
        self._idle_stop: asyncio.TimerHandle | None = None

    def pool(self) -> ProcessPoolExecutor:
        """The worker, started (and warming up) if none is running."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=watch_parent,
                initargs=(os.getpid(),),
            )
            self._analyses = 0
            self._warm = self._pool.submit(warm_up)
        return self._pool

    async def analyse(
        self, text: str, version: int | None, path: Path | None, settings: api.Settings, context: api.ProjectContext
    ) -> Analysis:
        """Analyse in the worker process; if it died (killed, out of memory), start a new one and
        analyse this document on a thread meanwhile, so the editor still gets its diagnostics."""
        with open_documents_idle():
            return await self._analyse(text, version, path, settings, context)

    async def _analyse(
        self, text: str, version: int | None, path: Path | None, settings: api.Settings, context: api.ProjectContext
    ) -> Analysis:
        loop = asyncio.get_running_loop()
        pool = self.pool()
        if self._warm is not None and not self._warm.done():
            # The worker is still starting (the first document right after `initialized`): do
            # not wait for it, analyse here this once.
            return await loop.run_in_executor(self._fallback, analyse, text, version, path, settings, context)
        try:
            future = loop.run_in_executor(pool, analyse_in_worker, text, version, path, settings, context)
            self._analyses += 1
            if self._analyses >= ANALYSES_PER_WORKER:
                # Replace the worker: what is already submitted still finishes on the old one
                # (Python's own max_tasks_per_child can hang a queued task in 3.11, so it is not used).
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=False)
            return await future
        except BrokenProcessPool:
            self._warn("graphmend: the analysis worker stopped; starting a new one")
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            return await loop.run_in_executor(self._fallback, analyse, text, version, path, settings, context)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def stop_when_idle(self, delay_s: float, idle: Callable[[], bool]) -> None:
        """If `idle()` now, stop the worker in `delay_s` unless it no longer is by then; each call
        replaces the previous one's timer."""
        if self._idle_stop is not None:
            self._idle_stop.cancel()
            self._idle_stop = None
        if idle():
            self._idle_stop = asyncio.get_running_loop().call_later(delay_s, self._stop_if_idle, idle)

    def _stop_if_idle(self, idle: Callable[[], bool]) -> None:
        self._idle_stop = None
        if idle():
            self.close()


def index_pool() -> ProcessPoolExecutor:
    """The index build's processes: one per core, at most four, at a lower priority than the
    worker that analyses open documents, and pausing between files while it works (`index_worker_init`)."""
    return ProcessPoolExecutor(
        max_workers=max(1, min(os.cpu_count() or 1, 4)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=index_worker_init,
        initargs=(os.getpid(), open_documents_idle().event),
    )
