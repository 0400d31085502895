"""What the server announces, and what each client can take.

The whole offer is here, so that it reads in one place: the handlers register with these options,
and act on `ClientSupport`, the few answers the server needs from the client's capabilities."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from ..edit.diagnostics import SOURCE

TEXT_DOCUMENT_SYNC_KIND = types.TextDocumentSyncKind.Incremental
# Jupyter notebooks' Python cells are synced as notebook documents (LSP 3.17), saves included.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook=types.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook"),
            cells=[types.NotebookCellLanguage(language="python")],
        )
    ],
    save=True,
)
DIAGNOSTIC_OPTIONS = types.DiagnosticOptions(
    identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
)
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.graphmend"
CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
    resolve_provider=True,
)
COMMAND_FIX_ALL = "graphmend.applyAllFixes"
COMMAND_SHOW_DIFF = "graphmend.showFixDiff"
COMMAND_UNSAFE_FIXES = "graphmend.unsafeFixes"
COMMAND_VERIFY = "graphmend.verify"
# Recorded runs (`graphmend record`): the command line that records a script, and "a run was recorded".
COMMAND_RECORD = "graphmend.recordCommand"
COMMAND_RUN_RECORDED = "graphmend.runRecorded"
# `graphmend fix --prove`: the command line that proves a file's fixes on a run of a script (then "runRecorded").
COMMAND_PROVE = "graphmend.proveCommand"
RUN_STATUS = "graphmend/runStatus"  # a request: the newest run's status, for a status bar
# Registered after `initialized` where the client can: changes on disk keep the workspace index
# current, and a run recorded in any terminal re-marks the findings it confirms.
WATCHER_ID = "graphmend-python-files"
RUNS_FOLDER = "/.graphmend/runs/"
WATCHED_FILES = types.DidChangeWatchedFilesRegistrationOptions(
    watchers=[
        types.FileSystemWatcher(glob_pattern="**/*.py"),
        types.FileSystemWatcher(glob_pattern=f"**{RUNS_FOLDER}**"),
    ]
)


@dataclass(frozen=True)
class ClientSupport:
    """What the client can take, read from its capabilities."""

    pull_diagnostics: bool  # it pulls diagnostics itself (LSP 3.17): then we do not push them too
    diagnostic_refresh: bool  # it pulls again when asked to
    related_information: bool
    versioned_edits: bool  # `TextDocumentEdit`s, applied only to the version they were made for
    lazy_code_actions: bool  # it resolves a code action's edit when the action is chosen
    watched_files_registration: bool
    work_done_progress: bool

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> ClientSupport:
        text_document, workspace, window = capabilities.text_document, capabilities.workspace, capabilities.window
        publish = text_document.publish_diagnostics if text_document else None
        code_action = text_document.code_action if text_document else None
        resolve = code_action.resolve_support if code_action else None
        watched = workspace.did_change_watched_files if workspace else None
        return cls(
            pull_diagnostics=bool(text_document and text_document.diagnostic is not None),
            diagnostic_refresh=bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support),
            related_information=bool(publish and publish.related_information),
            versioned_edits=bool(workspace and workspace.workspace_edit and workspace.workspace_edit.document_changes),
            lazy_code_actions=bool(resolve and "edit" in resolve.properties),
            watched_files_registration=bool(watched and watched.dynamic_registration),
            work_done_progress=bool(window and window.work_done_progress),
        )
