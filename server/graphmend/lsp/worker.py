"""What runs in the analysis worker process: graphmend's core, nothing of the LSP stack.

Analyses run in a separate process, recycled every few hundred analyses: the server's memory
stays flat however many large files an editor session opens (allocator high-water marks go away
with the worker), and a crash or runaway in an analysis costs one result, never the server.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from .. import api
from ..api import Diagnostic, SourceText
from .oversize import MAX_MESSAGE_BYTES, placeholder_size

PARENT_POLL_S = 0.5


def watch_parent(parent_pid: int) -> None:
    """Worker initializer: end this process once the server is gone, however it went (SIGKILL
    included, where no cleanup of the server's runs). An orphan is re-parented, so its parent pid
    changes; a daemon thread notices within PARENT_POLL_S and exits at once."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="graphmend-parent-watch", daemon=True).start()


INDEX_NICENESS = 10  # how much lower the index build's processes run than the open documents' worker
# Longest an index process waits for an open document's analysis before its next file: a bound, so
# that a flag left set by mistake slows the index down but never stops it.
FOREGROUND_WAIT_S = 5.0


class EventLike(Protocol):
    def wait(self, timeout: float | None = None) -> bool: ...


_open_documents_idle: EventLike | None = None  # set while no open document is being analysed


def index_worker_init(parent_pid: int, open_documents_idle: EventLike | None = None) -> None:
    """The index build's processes: watch the server (`watch_parent`), run at a lower priority, and
    wait before each file while an open document is being analysed (`open_documents_idle`), so
    that on a small machine the squiggles of the file being edited are not queued behind the index."""
    global _open_documents_idle
    watch_parent(parent_pid)
    _open_documents_idle = open_documents_idle
    if hasattr(os, "nice"):
        try:
            os.nice(INDEX_NICENESS)
        except OSError:
            pass  # not allowed here: the index just competes as before


def _after_open_documents() -> None:
    if _open_documents_idle is not None:
        _open_documents_idle.wait(FOREGROUND_WAIT_S)


_WARM_UP = "import torch\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        print(x)\n    return x\n"


def warm_up() -> None:
    """Run once when the worker starts: imports and first-call costs are paid before any document."""
    api.check_source(_WARM_UP)


@dataclass(frozen=True)
class Analysis:
    """graphmend's result for one version of one document."""

    version: int | None
    text: str
    lines: list[str]
    diagnostics: tuple[Diagnostic, ...]
    settings: api.Settings
    context: api.ProjectContext = api.ProjectContext()  # what the workspace said about the file


def analyse(
    text: str,
    version: int | None,
    path: Path | None,
    settings: api.Settings,
    context: api.ProjectContext = api.ProjectContext(),  # noqa: B008 (frozen: one shared empty context)
) -> Analysis:
    """Diagnostics of a document's text in its project `context` (its summary for the workspace
    index is computed apart, when the editor pauses: `open_documents`)."""
    size = placeholder_size(text)
    if size is not None:  # a document the editor sent as more than the server reads
        note = api.too_large_note(size, f"the {MAX_MESSAGE_BYTES >> 20} MB graphmend reads from the editor")
        return Analysis(version, text, SourceText(text).lines, (note,), settings)
    if api.too_large(text, settings):  # at most one note, at the start: the first line is all positions need
        return Analysis(
            version, text, SourceText(text[:4096]).lines[:1], tuple(api.check_source(text, path, settings)), settings
        )
    if path is None:
        return Analysis(version, text, SourceText(text).lines, tuple(api.check_source(text, path, settings)), settings)
    diagnostics = api.check_source(text, path, settings, context, _unit_cache(path, settings))
    return Analysis(version, text, SourceText(text).lines, tuple(diagnostics), settings, context)


def analyse_in_worker(
    text: str, version: int | None, path: Path | None, settings: api.Settings, context: api.ProjectContext
) -> Analysis:
    """`analyse` as the worker process runs it: its garbage collected in the editor's pauses. Only
    there: the server's own analyses (a request's, or one while the worker starts) must not freeze
    the server's heap, whose garbage then piled up between pauses (the keystroke replay's server:
    168 -> 353 MB over 25 files, 145 MB at the end without)."""
    with _collected_in_pauses():
        return analyse(text, version, path, settings, context)


IDLE_COLLECT_S = 0.3  # a pause in typing this long: the worker collects its garbage then
_idle_collection: threading.Timer | None = None


@contextmanager
def _collected_in_pauses() -> Iterator[None]:
    """Garbage is collected in the editor's pauses, not in an edit's analysis: what the analyses
    keep (the documents' units) joins the collector's permanent generation, so that automatic
    collections walk only what is new, and a full collection runs once the worker has been idle
    IDLE_COLLECT_S (an analysis that starts first puts it off). Collecting over the units kept
    inside an analysis made one edit in four take 4-5 times as long (T5: 12x `ast.parse` instead
    of 2.5x, `lsp_latency.py --after-open`)."""
    global _idle_collection
    if _idle_collection is not None:
        _idle_collection.cancel()
    try:
        yield
    finally:
        gc.freeze()
        _idle_collection = threading.Timer(IDLE_COLLECT_S, _collect)
        _idle_collection.daemon = True
        _idle_collection.start()


def _collect() -> None:
    gc.unfreeze()
    gc.collect()


_UNIT_CACHES: OrderedDict[tuple[str, api.Settings], api.UnitCache] = OrderedDict()
UNIT_CACHES = 16  # documents whose units the worker keeps (the most recently analysed)


def _unit_cache(path: Path, settings: api.Settings) -> api.UnitCache:
    """The units of the document's previous version: an edit re-analyses only what it touched."""
    key = (str(path), settings)
    cache = _UNIT_CACHES.pop(key, None) or api.UnitCache()
    _UNIT_CACHES[key] = cache
    while len(_UNIT_CACHES) > UNIT_CACHES:
        _UNIT_CACHES.popitem(last=False)
    return cache


def summarize_files(paths: list[str], overrides: dict[str, Any]) -> list[tuple[str, api.ModuleSummary | None]]:
    """Summaries of files on disk, each with its own pyproject settings plus the editor's
    `overrides` (for the workspace index)."""
    found = []
    for name in paths:
        _after_open_documents()
        found.append((name, api.summarize_file(Path(name), _settings(Path(name), overrides))))
    return found


@dataclass(frozen=True)
class ClosedFile:
    """The diagnostics of a file that is not open, without fixes (nothing can apply them), and
    the lines they touch (for position units)."""

    path: str
    context: api.ProjectContext
    diagnostics: tuple[Diagnostic, ...]
    lines: dict[int, str]


def check_closed_files(jobs: list[tuple[str, api.ProjectContext]], overrides: dict[str, Any]) -> list[ClosedFile]:
    found = []
    for name, context in jobs:
        _after_open_documents()
        path = Path(name)
        try:
            text = api.read_source(path)
        except api.SourceError:
            found.append(ClosedFile(name, context, (), {}))
            continue
        diagnostics = tuple(
            replace(d, fix=None) for d in api.check_source(text, path, _settings(path, overrides), context)
        )
        lines = SourceText(text).lines
        touched = {n for d in diagnostics for n in (d.range.start.line, d.range.end.line)}
        found.append(ClosedFile(name, context, diagnostics, {n: lines[n] for n in touched if n < len(lines)}))
    return found


def _settings(path: Path, overrides: dict[str, Any]) -> api.Settings:
    """The file's settings (`api.settings_for`, read once per folder while unchanged) with the
    editor's `overrides`; defaults where a pyproject.toml is invalid (the server reports it)."""
    try:
        base = api.settings_for(path.parent)
    except api.SettingsError:
        base = api.Settings()
    try:
        return base.merged(overrides)
    except api.SettingsError:
        return base
