"""What runs in the analysis worker process: graphmend's core, nothing of the LSP stack.

Analyses run in a separate process, recycled every few hundred analyses: the server's memory
stays flat however many large files an editor session opens (allocator high-water marks go away
with the worker), and a crash or runaway in an analysis costs one result, never the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import api
from ..diagnostics import Diagnostic
from ..source import SourceText


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
