"""Fixes as workspace edits: versioned `TextDocumentEdit`s where the client takes them, so that an
edit computed for version N is never applied to version N+1; plain `changes` elsewhere."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import PositionCodec

from ...api import Fix, Position, Range, SourceText
from ..notebook_analysis import Cell, NotebookAnalysis
from ..worker import Analysis
from .locations import to_client_range


def document_edit(uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    return _workspace_edit([(uri, version, edits)], versioned)


def fix_edit(uri: str, result: Analysis, fix: Fix, codec: PositionCodec, versioned: bool) -> types.WorkspaceEdit:
    edits = [types.TextEdit(to_client_range(codec, result.lines, e.range), e.new_text) for e in fix.edits]
    return document_edit(uri, result.version, edits, versioned)


def whole_document_edit(
    uri: str, result: Analysis, new_text: str, codec: PositionCodec, versioned: bool
) -> types.WorkspaceEdit:
    whole = to_client_range(codec, result.lines, _whole(result.lines))
    return document_edit(uri, result.version, [types.TextEdit(whole, new_text)], versioned)


def cells_edit(
    analysis: NotebookAnalysis, changed: dict[Cell, str], codec: PositionCodec, versioned: bool
) -> types.WorkspaceEdit:
    """Each changed cell's new text, as one edit per cell document (at the version analysed)."""
    edits: list[tuple[str, int | None, list[types.TextEdit]]] = []
    for cell, text in sorted(changed.items(), key=lambda item: item[0].number):
        kept = analysis.cell_analysis(cell.uri)
        lines = kept.lines if kept is not None else SourceText(cell.text).lines
        edits.append((cell.uri, cell.version, [types.TextEdit(to_client_range(codec, lines, _whole(lines)), text)]))
    return _workspace_edit(edits, versioned)


def _whole(lines: Sequence[str]) -> Range:
    last = len(lines) - 1
    return Range(Position(0, 0), Position(last, len(lines[last])))


def _workspace_edit(edits: list[tuple[str, int | None, list[types.TextEdit]]], versioned: bool) -> types.WorkspaceEdit:
    """Edits of documents, each as (uri, the version they were computed for, its text edits)."""
    if versioned:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), text_edits
                )
                for uri, version, text_edits in edits
            ]
        )
    return types.WorkspaceEdit(changes={uri: text_edits for uri, _, text_edits in edits})
