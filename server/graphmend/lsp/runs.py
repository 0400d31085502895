"""Recorded runs in the editor (`graphmend record`, docs/record.md): the newest run's status for a
status bar (`graphmend/runStatus`), the command line that records a script with this server's
graphmend (`graphmend.recordCommand`) or proves fixes on a run of it (`graphmend.proveCommand`,
docs/prove.md), and "a run was recorded" (`graphmend.runRecorded`): the open documents are analysed
again, so the findings the run met are marked, and their fixes' verdicts said. A run recorded in a
terminal does the same through the file watchers (`workspace.did_change_watched_files`)."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .. import api
from . import open_documents
from .edit.locations import path_of
from .session.capabilities import COMMAND_PROVE, COMMAND_RECORD, COMMAND_RUN_RECORDED, RUN_STATUS
from .session.state import GraphmendServer, server

LIBRARY = Path(__file__).resolve().parents[2]  # the folder holding the graphmend package this server runs
# `python -c` with this and LIBRARY: the graphmend CLI of that folder, for a Python that does not find
# it by itself (the extension's bundled server); the command it runs does not get the folder.
_CLI_FROM_LIBRARY = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'graphmend'; "
    "from graphmend.cli import main; sys.exit(main())"
)


@server.feature(RUN_STATUS)
async def run_status(ls: GraphmendServer, params: Any) -> dict[str, Any] | None:
    """The newest run of the project of `params.uri` (a document or a folder): `run` (its folder's
    name), `folder`, `recordedAt` (when it ended, seconds since the epoch), `events` (those at the
    project's lines), `stale` (those whose line is gone, judged against the open documents as the
    editor has them), `torch`, `runs` (how many runs recorded at the same time are shown together);
    null without a run or with `runs` off."""
    uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
    path = path_of(uri) if isinstance(uri, str) else None
    if path is None or not ls.settings_for(path).runs:
        return None
    texts = {
        os.path.realpath(document_path): document.source
        for document_uri, document in list(ls.workspace.text_documents.items())
        if ls.notebook_of(document_uri) is None and (document_path := path_of(document_uri)) is not None
    }
    status = await asyncio.get_running_loop().run_in_executor(ls.executor, api.run_status, path, texts)
    if status is None:
        return None
    return {
        "run": status.folder.name,
        "folder": str(status.folder),
        "recordedAt": status.recorded_at,
        "events": status.events,
        "stale": status.stale,
        "torch": status.torch,
        "runs": status.runs,
    }


@server.command(COMMAND_RECORD)
async def record_command(ls: GraphmendServer, *arguments: Any) -> dict[str, Any] | None:
    """The command line that records a script, for the client to run where the user sees it (a
    terminal): arguments (script, [arguments], [python]); `python` defaults to the server's own.
    Answers `command` (argv) and `cwd`, the script's project root, where the run is kept and where
    the editor looks for it. The client says `graphmend.runRecorded` when it ended."""
    return await _script_command(ls, ["record"], arguments)


@server.command(COMMAND_PROVE)
async def prove_command(ls: GraphmendServer, *arguments: Any) -> dict[str, Any] | None:
    """The command line that proves fixes on a run of a script (`graphmend fix --prove`, which
    applies the proved ones): arguments (script, [arguments], [python], [file], [unsafe]); `file`
    (a URI): only that file's fixes (default: the project's); `unsafe`: the unsafe fixes too.
    Answers as `graphmend.recordCommand`; the client says `graphmend.runRecorded` when it ended, and
    the findings say their fixes' verdicts."""
    file = path_of(arguments[3]) if len(arguments) > 3 and isinstance(arguments[3], str) else None
    unsafe = len(arguments) > 4 and arguments[4] is True
    options = ["fix", "--prove", *(["--unsafe-fixes"] if unsafe else []), *([str(file)] if file else [])]
    return await _script_command(ls, options, arguments)


async def _script_command(ls: GraphmendServer, options: list[str], arguments: tuple[Any, ...]) -> dict[str, Any] | None:
    """`graphmend OPTIONS -- python SCRIPT ARGS` from arguments (script, [arguments], [python])."""
    script = path_of(arguments[0]) if arguments and isinstance(arguments[0], str) else None
    if script is None:
        return None
    args = [str(a) for a in arguments[1]] if len(arguments) > 1 and isinstance(arguments[1], list) else []
    python = arguments[2] if len(arguments) > 2 and isinstance(arguments[2], str) and arguments[2] else sys.executable
    cli = await asyncio.get_running_loop().run_in_executor(ls.executor, graphmend_cli)
    return {"command": [*cli, *options, "--", python, str(script), *args], "cwd": str(api.project_root(script.parent))}


@functools.cache
def graphmend_cli() -> list[str]:
    """How to run this server's graphmend CLI: `python -m graphmend` where its Python finds this
    graphmend by itself (an install), else with LIBRARY put on its path first (the extension's
    bundled server; a PYTHONPATH only the server's own command sets)."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    probe = "import importlib.util; print(importlib.util.find_spec('graphmend').origin)"
    try:
        found = subprocess.run(
            [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    if found and Path(found).resolve().parents[1] == LIBRARY:
        return [sys.executable, "-m", "graphmend"]
    return [sys.executable, "-c", _CLI_FROM_LIBRARY, str(LIBRARY)]


@server.command(COMMAND_RUN_RECORDED)
def run_recorded(ls: GraphmendServer, *arguments: Any) -> None:
    """A run was recorded: the open documents are analysed again, at once (a pull that follows waits
    for those analyses)."""
    open_documents.analyse_open_again(ls)
