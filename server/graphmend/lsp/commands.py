"""Commands: apply all fixes, show the whole rewrite as a diff, verify a function by running it."""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import api, notebooks
from ..diagnostics import Applicability, Diagnostic
from ..reporting import plural
from . import notebook_analysis
from .edit.locations import path_of
from .edit.workspace_edits import cells_edit, whole_document_edit
from .session.capabilities import COMMAND_FIX_ALL, COMMAND_SHOW_DIFF, COMMAND_UNSAFE_FIXES, COMMAND_VERIFY
from .session.state import GraphmendServer, server


@server.command(COMMAND_FIX_ALL)
async def apply_all_fixes(ls: GraphmendServer, *arguments: Any) -> dict[str, Any]:
    """Apply every safe fix in the file through workspace/applyEdit, and say what it did and what it
    left: arguments (uri, unsafe=False, notify=True). `unsafe` applies the unsafe fixes too (a client
    shows their hazards first: `hazards` in the answer); `notify` sends the summary as a message
    (the VS Code extension shows its own, with a button for the unsafe fixes)."""
    uri = _uri_argument(arguments)
    unsafe = len(arguments) > 1 and arguments[1] is True
    notify = not (len(arguments) > 2 and arguments[2] is False)
    notebook = ls.notebook_of(uri) if uri else None
    if notebook is not None:
        analysis = ls.current_notebook(notebook.uri)
        if analysis is None:
            return _report(ls, FixAllReport(), notify)
        changed, applied = notebook_analysis.all_fixes_edits(analysis, path_of(notebook.uri), unsafe)
        report = FixAllReport.of(analysis.diagnostics, unsafe)
        if changed is not None:
            edit = cells_edit(analysis, changed, ls.workspace.position_codec, ls.client_supports.versioned_edits)
            answer = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label="graphmend: fix all")
            )
            report = replace(report, applied=applied if answer.applied else 0)
        return _report(ls, report, notify)
    result = ls.current(uri) if uri else None
    if uri is None or result is None:
        return _report(ls, FixAllReport(), notify)
    fixed = api.fix_source(result.text, path_of(uri), result.settings, unsafe=unsafe)
    report = FixAllReport.of(result.diagnostics, unsafe, fixed.error)
    if fixed.error is None and fixed.fixed != result.text:
        edit = whole_document_edit(
            uri, result, fixed.fixed, ls.workspace.position_codec, ls.client_supports.versioned_edits
        )
        answer = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="graphmend: fix all")
        )
        report = replace(report, applied=fixed.applied if answer.applied else 0)
    return _report(ls, report, notify)


@server.command(COMMAND_UNSAFE_FIXES)
def unsafe_fixes(ls: GraphmendServer, *arguments: Any) -> dict[str, Any]:
    """The unsafe fixes Fix All would leave, each as `line N: <title naming its hazard>` (`hazards`),
    for a client to show before it asks for them; applies nothing."""
    uri = _uri_argument(arguments)
    notebook = ls.notebook_of(uri) if uri else None
    analysis = ls.current_notebook(notebook.uri) if notebook is not None else ls.current(uri) if uri else None
    report = FixAllReport.of(analysis.diagnostics, unsafe=False) if analysis is not None else FixAllReport()
    return _report(ls, report, notify=False)


@dataclass(frozen=True)
class FixAllReport:
    """What Fix All did and left: fixes applied, unsafe fixes it left (with their hazards, the
    fixes' titles), findings no fix removes."""

    applied: int = 0
    unsafe_available: int = 0
    without_fix: int = 0
    hazards: tuple[str, ...] = ()
    unsafe: bool = False
    error: str | None = None

    @classmethod
    def of(cls, diagnostics: Sequence[Diagnostic], unsafe: bool, error: str | None = None) -> FixAllReport:
        left = [d for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.UNSAFE]
        return cls(
            unsafe_available=0 if unsafe else len(left),
            without_fix=sum(d.fix is None for d in diagnostics),
            hazards=() if unsafe else tuple(f"line {d.range.start.line + 1}: {d.fix.described}" for d in left if d.fix),
            unsafe=unsafe,
            error=error,
        )

    @property
    def message(self) -> str:
        if self.error is not None:
            return f"graphmend: fixed nothing: {self.error}"
        kind = "fix" if self.unsafe else "safe fix"
        parts = [f"applied {plural(self.applied, kind)}"]
        if self.unsafe_available:
            parts.append(f"{plural(self.unsafe_available, 'unsafe fix')} available (Fix All, Including Unsafe)")
        if self.without_fix:
            parts.append(f"{plural(self.without_fix, 'finding')} with no automatic fix")
        return "graphmend: " + "; ".join(parts)


def _report(ls: GraphmendServer, report: FixAllReport, notify: bool) -> dict[str, Any]:
    if notify:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=report.message))
    answer: dict[str, Any] = {
        "applied": report.applied,
        "unsafeAvailable": report.unsafe_available,
        "withoutFix": report.without_fix,
        "hazards": list(report.hazards),
        "message": report.message,
    }
    if report.error is not None:
        answer["error"] = report.error
    return answer


@server.command(COMMAND_SHOW_DIFF)
def show_fix_diff(ls: GraphmendServer, *arguments: Any) -> str:
    """The rewrite of the whole file (safe fixes; `unsafe` as second argument for all) as a unified diff."""
    uri = _uri_argument(arguments)
    unsafe = len(arguments) > 1 and bool(arguments[1])
    notebook = ls.notebook_of(uri) if uri else None
    if notebook is not None:
        analysis = ls.current_notebook(notebook.uri)
        changed = notebook_analysis.all_fixes_edits(analysis, path_of(notebook.uri), unsafe)[0] if analysis else None
        name = Path(path_of(notebook.uri) or "notebook.ipynb").name
        ordered = sorted((changed or {}).items(), key=lambda item: item[0].number)
        return "".join(notebooks.cell_diff(name, [(cell.number, cell.text, text) for cell, text in ordered]))
    result = ls.current(uri) if uri else None
    if result is None:
        return ""
    fixed = api.fix_source(result.text, path_of(uri), result.settings, unsafe=unsafe)  # type: ignore[arg-type]
    name = Path(path_of(uri) or "file.py").name  # type: ignore[arg-type]
    return "".join(
        difflib.unified_diff(result.text.splitlines(True), fixed.fixed.splitlines(True), f"a/{name}", f"b/{name}")
    )


@server.command(COMMAND_VERIFY)
async def verify_function(ls: GraphmendServer, *arguments: Any) -> str:
    """Run `graphmend verify` on the saved file: arguments (uri, entry, [inputs, ...]). Executes the file."""
    uri = _uri_argument(arguments)
    path = path_of(uri) if uri else None
    if path is None or len(arguments) < 3:
        return "graphmend.verify needs (uri, entry, [inputs...])"
    from ..verify import VerifyError, verify

    entry, inputs = str(arguments[1]), [str(i) for i in arguments[2]]
    loop = asyncio.get_running_loop()
    try:
        report = await loop.run_in_executor(ls.executor, verify, path, entry, inputs, ls.settings_for(path), False)
    except (VerifyError, api.SourceError) as error:
        return f"graphmend verify: {error}"
    return report.table()


def _uri_argument(arguments: tuple[Any, ...]) -> str | None:
    if not arguments:
        return None
    first = arguments[0]
    if isinstance(first, list) and first:  # some clients wrap the arguments in a list
        first = first[0]
    if isinstance(first, dict):
        first = first.get("uri")
    return first if isinstance(first, str) else None
