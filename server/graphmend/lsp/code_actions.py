"""Quick fixes, `# graphmend: ignore` actions and fix-all, resolved lazily where the client can: from
the analysis the server kept, else from the fix the action's diagnostic carries in its `data`."""

from __future__ import annotations

import re

from lsprotocol import types

from ..api import Applicability, Diagnostic, Position, Range, apply_fixes, proof_sentence
from . import notebook_analysis
from .edit.diagnostics import to_lsp_diagnostic
from .edit.locations import range_from_json
from .edit.workspace_edits import cells_edit, document_edit, fix_edit, whole_document_edit
from .oversize import placeholder_size
from .session.capabilities import CODE_ACTION_OPTIONS, COMMAND_FIX_ALL, FIX_ALL_KIND
from .session.state import GraphmendServer, server
from .worker import Analysis

_IGNORE_COMMENT = re.compile(r"#\s*graphmend:\s*ignore(\[(?P<codes>[^\]]*)\])?")


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_OPTIONS)
def code_actions(ls: GraphmendServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    result = ls.current(uri)
    if result is None or placeholder_size(result.text) is not None:
        return []  # a document too large to read stands as a placeholder: no edit is ever made on it
    only = params.context.only
    wants_quick_fix = not only or any(k.startswith(types.CodeActionKind.QuickFix.value) for k in only)
    wants_fix_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
    start = ls.from_position(uri, result.lines, params.range.start)
    end = ls.from_position(uri, result.lines, params.range.end)
    actions: list[types.CodeAction] = []
    if wants_quick_fix:
        for index, diagnostic in enumerate(result.diagnostics):
            if diagnostic.range.end < start or diagnostic.range.start > end:
                continue
            lsp_diagnostic = to_lsp_diagnostic(
                uri, result, index, ls.workspace.position_codec, ls.client_supports.related_information
            )
            if diagnostic.fix is not None:
                actions.append(_quick_fix(ls, uri, result, index, lsp_diagnostic))
            ignore = _ignore_action(ls, uri, result, diagnostic, lsp_diagnostic)
            if ignore is not None:
                actions.append(ignore)
    if wants_fix_all and any(
        d.fix is not None and d.fix.applicability is Applicability.SAFE for d in result.diagnostics
    ):
        action = types.CodeAction(
            title="graphmend: apply all safe fixes",
            kind=FIX_ALL_KIND,
            data={"uri": uri, "version": result.version, "fixAll": True},
        )
        actions.append(action if ls.client_supports.lazy_code_actions else _resolve(ls, action))
    elif wants_fix_all and only and params.context.trigger_kind != types.CodeActionTriggerKind.Automatic:
        # Fix All asked for by hand (Neovim's `code_action({only = {'source.fixAll.graphmend'}})`)
        # with no safe fix: an action that only says so (Fix All's report), where an empty answer
        # left "No code actions available". Not on save or for the lightbulb (Automatic).
        actions.append(
            types.CodeAction(
                title="graphmend: no safe fix to apply (say what is left)",
                kind=FIX_ALL_KIND,
                command=types.Command(title="graphmend: Fix All", command=COMMAND_FIX_ALL, arguments=[uri]),
            )
        )
    return actions


def _quick_fix(
    ls: GraphmendServer, uri: str, result: Analysis, index: int, lsp_diagnostic: types.Diagnostic
) -> types.CodeAction:
    fix = result.diagnostics[index].fix
    proof = result.diagnostics[index].data.proof
    assert fix is not None
    said = [*(["unsafe"] if fix.hazards else []), *([proof_sentence(proof)] if proof is not None else [])]
    action = types.CodeAction(
        title=f"graphmend: {fix.title}" + (f" ({'; '.join(said)})" if said else ""),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic],
        is_preferred=fix.applicability is Applicability.SAFE,  # a proved unsafe fix is offered, never preferred
        data={"uri": uri, "version": result.version, "index": index},
    )
    return action if ls.client_supports.lazy_code_actions else _resolve(ls, action)


def _ignore_action(
    ls: GraphmendServer, uri: str, result: Analysis, diagnostic: Diagnostic, lsp_diagnostic: types.Diagnostic
) -> types.CodeAction | None:
    """`# graphmend: ignore[CODE]` at the end of the diagnostic's first line (merged with an existing one)."""
    if diagnostic.code == "GM001":
        return None
    line_number = diagnostic.range.start.line
    line = result.lines[line_number]
    match = _IGNORE_COMMENT.search(line)
    if match is not None and match.group("codes") is None:
        return None  # already ignores everything
    if match is not None:
        codes = [c.strip() for c in (match.group("codes") or "").split(",") if c.strip()]
        new_comment = f"# graphmend: ignore[{', '.join([*codes, diagnostic.code])}]"
        edit_range = Range(Position(line_number, match.start()), Position(line_number, match.end()))
    else:
        content = line.rstrip()
        new_comment = f"  # graphmend: ignore[{diagnostic.code}]"
        edit_range = Range(Position(line_number, len(content)), Position(line_number, len(line)))
    text_edit = types.TextEdit(ls.to_range(uri, result.lines, edit_range), new_comment)
    return types.CodeAction(
        title=f"graphmend: ignore {diagnostic.code} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic],
        edit=document_edit(uri, result.version, [text_edit], ls.client_supports.versioned_edits),
    )


@server.feature(types.CODE_ACTION_RESOLVE)
def resolve_code_action(ls: GraphmendServer, action: types.CodeAction) -> types.CodeAction:
    return _resolve(ls, action)


def _resolve(ls: GraphmendServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri, version = data.get("uri"), data.get("version")
    if uri is None:
        return action
    notebook = ls.notebook_of(uri)
    if notebook is not None:
        return _resolve_in_notebook(ls, action, notebook.uri, uri, data)
    result = ls.results.get(uri)  # the analysis the action came from, kept: the quick way
    if (result is None or result.version != version) and not data.get("fixAll"):
        carried = _carried_fix(ls, uri, action)
        if carried is not None:
            action.edit = carried
            return action
    if result is None or result.version != version:
        result = ls.current(uri)
        if result is None or result.version != version:
            action.disabled = types.CodeActionDisabled(reason="the document changed; ask for the fix again")
            return action
    if data.get("fixAll"):
        # One round over the fixes already computed with the diagnostics: no re-analysis, so the
        # lightbulb stays instant. (The applyAllFixes command repeats rounds until nothing changes.)
        safe = [d.fix for d in result.diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE]
        fixed_text, applied = apply_fixes(result.text, safe)
        if applied and fixed_text != result.text:
            action.edit = whole_document_edit(
                uri, result, fixed_text, ls.workspace.position_codec, ls.client_supports.versioned_edits
            )
        return action
    index = data.get("index")
    if isinstance(index, int) and 0 <= index < len(result.diagnostics) and result.diagnostics[index].fix is not None:
        action.edit = fix_edit(
            uri,
            result,
            result.diagnostics[index].fix,  # type: ignore[arg-type]
            ls.workspace.position_codec,
            ls.client_supports.versioned_edits,
        )
    return action


def _carried_fix(ls: GraphmendServer, uri: str, action: types.CodeAction) -> types.WorkspaceEdit | None:
    """The edit of the fix the action's diagnostic carries in its `data` (computed with it, in the
    client's units), when it was computed for the document's current version: how a quick fix
    resolves without the server's copy of the analysis, as Ruff's do."""
    if not ls.is_open(uri):
        return None
    current = ls.workspace.get_text_document(uri).version
    for diagnostic in action.diagnostics or ():
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        fix = data.get("fix")
        if not isinstance(fix, dict) or data.get("uri") != uri or data.get("version") != current:
            continue
        try:
            edits = [types.TextEdit(range_from_json(edit["range"]), edit["newText"]) for edit in fix["edits"]]
        except (KeyError, TypeError, ValueError):
            continue
        return document_edit(uri, current, edits, ls.client_supports.versioned_edits)
    return None


def _resolve_in_notebook(
    ls: GraphmendServer, action: types.CodeAction, notebook_uri: str, uri: str, data: dict
) -> types.CodeAction:
    """A fix in a notebook cell, applied to the notebook's module (a deferred logger's helper goes
    after the imports, maybe in another cell; IPython lines stay as they were): edits on every
    cell it changes."""
    analysis = ls.current_notebook(notebook_uri)
    cell = analysis.cell_analysis(uri) if analysis is not None else None
    if analysis is None or cell is None or cell.version != data.get("version"):
        action.disabled = types.CodeActionDisabled(reason="the notebook changed; ask for the fix again")
        return action
    if data.get("fixAll"):
        fixes = [d.fix for d in analysis.diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE]
    else:
        index = data.get("index")
        if not isinstance(index, int) or not 0 <= index < len(cell.diagnostics):
            return action
        position = cell.diagnostics[index].data.notebook_index
        fix = analysis.diagnostics[position].fix if position is not None else None
        fixes = [fix] if fix is not None else []
    changed = notebook_analysis.cell_edits(analysis, fixes) if fixes else None
    if changed:
        action.edit = cells_edit(analysis, changed, ls.workspace.position_codec, ls.client_supports.versioned_edits)
    return action
