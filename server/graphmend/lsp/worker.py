"""What runs in the analysis worker process: graphmend's core, nothing of the LSP stack.

Analyses run in a separate process, recycled every few hundred analyses: the server's memory
stays flat however many large files an editor session opens (allocator high-water marks go away
with the worker), and a crash or runaway in an analysis costs one result, never the server.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import api
from ..diagnostics import Diagnostic
from ..source import SourceText


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


def analyse(text: str, version: int | None, path: Path | None, settings: api.Settings) -> Analysis:
    if api.too_large(text, settings):  # at most one note, at the start: the first line is all positions need
        return Analysis(version, text, SourceText(text[:4096]).lines[:1], tuple(api.check_source(text, path, settings)), settings)
    return Analysis(version, text, SourceText(text).lines, tuple(api.check_source(text, path, settings)), settings)
