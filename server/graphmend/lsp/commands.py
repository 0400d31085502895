"""Commands: apply all fixes, show the whole rewrite as a diff, verify a function by running it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import api
from ..api import Applicability, Diagnostic, Fix, notebooks, plural, short_clause
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
    """The unsafe fixes Fix All would leave, for a client to show before it asks for them: `detail`,
    a line per fix and their hazards listed once; applies nothing."""
    uri = _uri_argument(arguments)
    notebook = ls.notebook_of(uri) if uri else None
    analysis = ls.current_notebook(notebook.uri) if notebook is not None else ls.current(uri) if uri else None
    report = FixAllReport.of(analysis.diagnostics, unsafe=False) if analysis is not None else FixAllReport()
    return _report(ls, report, notify=False)


@dataclass(frozen=True)
class UnsafeFix:
    """One unsafe fix Fix All left, and its finding's line (1-based)."""

    line: int
    fix: Fix


@dataclass(frozen=True)
class FixAllReport:
    """What Fix All did and left: fixes applied, unsafe fixes it left (with their hazards), findings
    no fix removes."""

    applied: int = 0
    unsafe_left: tuple[UnsafeFix, ...] = ()
    unsafe_command: str = "Fix All, Including Unsafe"  # how the editor applies them: its command's name
    without_fix: int = 0
    unsafe: bool = False
    error: str | None = None

    @classmethod
    def of(cls, diagnostics: Sequence[Diagnostic], unsafe: bool, error: str | None = None) -> FixAllReport:
        left = (
            ()
            if unsafe
            else tuple(
                UnsafeFix(d.range.start.line + 1, d.fix)
                for d in diagnostics
                if d.fix is not None and d.fix.applicability is Applicability.UNSAFE
            )
        )
        return cls(unsafe_left=left, without_fix=sum(d.fix is None for d in diagnostics), unsafe=unsafe, error=error)

    @property
    def message(self) -> str:
        if self.error is not None:
            return f"graphmend: fixed nothing: {self.error}"
        kind = "fix" if self.unsafe else "safe fix"
        parts = [f"applied {plural(self.applied, kind)}"]
        if self.unsafe_left:
            parts.append(f"{plural(len(self.unsafe_left), 'unsafe fix')} available ({self.unsafe_command})")
        if self.without_fix:
            parts.append(f"{plural(self.without_fix, 'finding')} with no automatic fix")
        return "graphmend: " + "; ".join(parts)

    @property
    def hazards(self) -> tuple[str, ...]:
        """Each unsafe fix in one line, `line N: <title> (unsafe: <hazards>)`, for a client's own list."""
        return tuple(f"line {left.line}: {left.fix.described}" for left in self.unsafe_left)

    @property
    def detail(self) -> str:
        """The unsafe fixes for a dialog to show before applying them: a line per fix, then what they
        may change, each hazard once however many fixes share it and without its asides (a dialog
        is read whole: 379 words for T5's 5 fixes when every fix spelled out its own)."""
        numbered: dict[str, int] = {}
        lines = []
        for left in self.unsafe_left:
            marks = sorted(numbered.setdefault(short_clause(hazard), len(numbered) + 1) for hazard in left.fix.hazards)
            lines.append(f"Line {left.line}: {left.fix.title}" + (f" [{','.join(map(str, marks))}]" if marks else ""))
        if numbered:
            lines += ["", "May change:", *(f"[{number}] {hazard}" for hazard, number in numbered.items())]
        return "\n".join(lines)


def _report(ls: GraphmendServer, report: FixAllReport, notify: bool) -> dict[str, Any]:
    if ls.client_name.lower().startswith("neovim"):  # the plugin's command (editors/neovim/plugin/graphmend.lua)
        report = replace(report, unsafe_command=":GraphmendFixAllUnsafe")
    if notify:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=report.message))
    answer: dict[str, Any] = {
        "applied": report.applied,
        "unsafeAvailable": len(report.unsafe_left),
        "withoutFix": report.without_fix,
        "hazards": list(report.hazards),
        "detail": report.detail,
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
        api.unified_diff(result.text.splitlines(True), fixed.fixed.splitlines(True), f"a/{name}", f"b/{name}")
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
