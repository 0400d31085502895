"""Notebook documents (LSP 3.17 notebook sync) as graphmend analyses them: the code cells of one
notebook are one module (`graphmend.notebooks`), analysed in the worker like a file; its
diagnostics are then split into one `Analysis` per cell, in the cell's own coordinates and
version, so publishing, pull diagnostics, hover and quick fixes work per cell as for a file. A fix
is applied to the whole module and comes back as edits on the cells it changes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from .. import api
from ..api import Diagnostic, Fix, SourceText, apply_fixes, notebooks
from .worker import Analysis


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based position in the notebook, markup cells counted
    uri: str
    version: int | None
    text: str
    code: bool  # a Python code cell (analysed)


@dataclass(frozen=True)
class Snapshot:
    """One version of a notebook: its cells as they are now, and the module they make."""

    uri: str
    version: int
    cells: tuple[Cell, ...]
    notebook: notebooks.Notebook

    def cell(self, number: int) -> Cell:
        return self.cells[number - 1]


def snapshot(workspace: Any, document: types.NotebookDocument) -> Snapshot:
    """The notebook's cells from the workspace (pygls keeps each cell as a text document)."""
    cells = []
    for number, cell in enumerate(document.cells, start=1):
        text_document = workspace.text_documents.get(unquote(cell.document))  # pygls keys them unquoted
        text = text_document.source if text_document is not None else ""
        language = getattr(text_document, "language_id", None) or "python"
        code = cell.kind == types.NotebookCellKind.Code and language == "python"
        cells.append(Cell(number, cell.document, getattr(text_document, "version", None), text, code))
    module = notebooks.from_cells([("code" if c.code else "markdown", c.text if c.code else "") for c in cells])
    return Snapshot(document.uri, document.version, tuple(cells), module)


def is_current(snap: Snapshot, workspace: Any) -> bool:
    """Whether the workspace still holds exactly this version of every cell."""
    document = workspace.get_notebook_document(notebook_uri=snap.uri)
    if document is None or document.version != snap.version or len(document.cells) != len(snap.cells):
        return False
    for cell, kept in zip(document.cells, snap.cells):
        text_document = workspace.text_documents.get(unquote(cell.document))
        if cell.document != kept.uri or text_document is None or text_document.source != kept.text:
            return False
    return True


@dataclass(frozen=True)
class NotebookAnalysis:
    snapshot: Snapshot
    diagnostics: tuple[Diagnostic, ...]  # in the module's coordinates (what fixes apply to)
    cells: dict[str, Analysis]  # cell uri (unquoted, as pygls keys documents) → its diagnostics in its own coordinates

    def cell_analysis(self, uri: str) -> Analysis | None:
        return self.cells.get(unquote(uri))

    settings: api.Settings
    context: api.ProjectContext


def split(snap: Snapshot, module: Analysis, path: Path | None) -> NotebookAnalysis:
    """The module's analysis as one analysis per code cell; each cell diagnostic's `data` says its
    cell and where it is in the module's list (`notebook_index`), which its fix is taken from."""
    diagnostics = (*module.diagnostics, *api.broken_cell_diagnostics(snap.notebook, path, module.settings))
    per_cell: dict[int, list[Diagnostic]] = {c.number: [] for c in snap.cells if c.code}
    for index, diagnostic in enumerate(diagnostics):
        number, local = snap.notebook.cells.to_cell(diagnostic)
        if number is not None and number in per_cell:
            per_cell[number].append(replace(local, data=replace(local.data, cell=number, notebook_index=index)))
    cells = {}
    for number, found in per_cell.items():
        cell = snap.cell(number)
        ordered = tuple(sorted(found, key=lambda d: d.range.start))
        cells[unquote(cell.uri)] = Analysis(
            cell.version, cell.text, SourceText(cell.text).lines, ordered, module.settings, module.context
        )
    return NotebookAnalysis(snap, tuple(diagnostics), cells, module.settings, module.context)


def cell_edits(analysis: NotebookAnalysis, fixes: list[Fix]) -> dict[Cell, str] | None:
    """The new text of each cell these fixes (in module coordinates) change; None when they change
    nothing or would move code across cells."""
    fixed, applied = apply_fixes(analysis.snapshot.notebook.module, fixes)
    if not applied:
        return None
    return _changed(analysis.snapshot, fixed)


def all_fixes_edits(analysis: NotebookAnalysis, path: Path | None, unsafe: bool) -> tuple[dict[Cell, str] | None, int]:
    """Every fix, round after round until nothing changes (`graphmend fix` on the notebook)."""
    result = api.fix_source(analysis.snapshot.notebook.module, path, analysis.settings, unsafe, analysis.context)
    if result.error is not None or result.fixed == analysis.snapshot.notebook.module:
        return None, 0
    return _changed(analysis.snapshot, result.fixed), result.applied


def _changed(snap: Snapshot, fixed_module: str) -> dict[Cell, str] | None:
    try:
        changed = snap.notebook.changed_sources(fixed_module)
    except notebooks.NotebookError:
        return None
    return {snap.cell(number): text for number, text in changed.items()} or None
