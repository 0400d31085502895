"""graphmend's diagnostics as the protocol's. Each carries its fix in `data`, in the client's
position units, so that a code action needs no second analysis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec

from ...api import Diagnostic, Severity
from ..worker import Analysis, ClosedFile
from .locations import SomeLines, lsp_range, range_json, to_client_range

SOURCE = "graphmend"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
}


def to_lsp_diagnostics(
    uri: str, result: Analysis, codec: PositionCodec, related_information: bool
) -> list[types.Diagnostic]:
    return [
        to_lsp_diagnostic(uri, result, index, codec, related_information) for index in range(len(result.diagnostics))
    ]


def to_lsp_diagnostic(
    uri: str, result: Analysis, index: int, codec: PositionCodec, related_information: bool
) -> types.Diagnostic:
    """The `index`th diagnostic of an open document's analysis; its `data` names the analysis
    (uri, version, index) for the code action that comes back with it."""
    diagnostic = result.diagnostics[index]
    data: dict[str, Any] = {"uri": uri, "version": result.version, "index": index, **diagnostic.data.to_json()}
    if diagnostic.fix is not None:  # precomputed with the diagnostic, in the client's position units
        data["fix"] = {
            "title": diagnostic.fix.title,
            "hazards": list(diagnostic.fix.hazards),
            "applicability": diagnostic.fix.applicability.value,
            "edits": [
                {"range": range_json(to_client_range(codec, result.lines, e.range)), "newText": e.new_text}
                for e in diagnostic.fix.edits
            ],
        }
    return types.Diagnostic(
        range=to_client_range(codec, result.lines, diagnostic.range),
        message=diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        related_information=_related(uri, result.lines, diagnostic, codec) if related_information else None,
        data=data,
    )


def closed_file_diagnostics(
    uri: str, closed: ClosedFile, codec: PositionCodec, related_information: bool
) -> list[types.Diagnostic]:
    """A closed file's diagnostics: positions in the client's units from the lines they touch."""
    lines = SomeLines(closed.lines)
    return [
        types.Diagnostic(
            range=to_client_range(codec, lines, diagnostic.range),
            message=diagnostic.message,
            severity=_SEVERITY[diagnostic.severity],
            code=diagnostic.code,
            source=SOURCE,
            code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
            related_information=_related(uri, lines, diagnostic, codec) if related_information else None,
            data={"uri": uri, **diagnostic.data.to_json()},
        )
        for diagnostic in closed.diagnostics
    ]


def _related(
    uri: str, lines: Sequence[str] | SomeLines, diagnostic: Diagnostic, codec: PositionCodec
) -> list[types.DiagnosticRelatedInformation] | None:
    """Related locations; one in another file keeps its positions in code points (its lines
    are not at hand; they differ from UTF-16 only after non-ASCII text on the line)."""
    if not diagnostic.related:
        return None
    found = []
    for related in diagnostic.related:
        if related.path is None:
            location = types.Location(uri, to_client_range(codec, lines, related.range))
        else:
            location = types.Location(from_fs_path(related.path) or related.path, lsp_range(related.range))
        found.append(types.DiagnosticRelatedInformation(location, related.message))
    return found
