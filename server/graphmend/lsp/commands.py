"""Commands: apply all fixes, show the whole rewrite as a diff, verify a function by running it."""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import api, notebooks
from . import notebook_analysis
from .edit.locations import path_of
from .edit.workspace_edits import cells_edit, whole_document_edit
from .session.capabilities import COMMAND_FIX_ALL, COMMAND_SHOW_DIFF, COMMAND_VERIFY
from .session.state import GraphmendServer, server


@server.command(COMMAND_FIX_ALL)
async def apply_all_fixes(ls: GraphmendServer, *arguments: Any) -> dict[str, Any]:
    """Apply every safe fix in the file (the argument is the document URI), through workspace/applyEdit."""
    uri = _uri_argument(arguments)
    notebook = ls.notebook_of(uri) if uri else None
    if notebook is not None:
        analysis = ls.current_notebook(notebook.uri)
        changed, applied = (
            notebook_analysis.all_fixes_edits(analysis, path_of(notebook.uri), False) if analysis else (None, 0)
        )
        if analysis is None or changed is None:
            return {"applied": 0}
        edit = cells_edit(analysis, changed, ls.workspace.position_codec, ls.client_supports.versioned_edits)
        answer = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="graphmend: fix all")
        )
        return {"applied": applied if answer.applied else 0}
    result = ls.current(uri) if uri else None
    if uri is None or result is None:
        return {"applied": 0}
    fixed = api.fix_source(result.text, path_of(uri), result.settings, unsafe=False)
    if fixed.error is not None or fixed.fixed == result.text:
        return {"applied": 0, "error": fixed.error}
    edit = whole_document_edit(
        uri,
        result,
        fixed.fixed,
        ls.workspace.position_codec,
        ls.client_supports.versioned_edits,
    )
    answer = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="graphmend: fix all"))
    return {"applied": fixed.applied if answer.applied else 0}


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
