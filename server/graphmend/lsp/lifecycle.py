"""Initialization, configuration and shutdown."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from . import open_documents, workspace
from .options import parse_options
from .session.state import GraphmendServer, server


@server.feature(types.INITIALIZE)
def initialize(ls: GraphmendServer, params: types.InitializeParams) -> None:
    ls.options = parse_options(params.initialization_options)
    ls.client_name = params.client_info.name if params.client_info is not None else ""


@server.feature(types.INITIALIZED)
def initialized(ls: GraphmendServer, params: types.InitializedParams) -> None:
    """Start the worker now, so the first didOpen does not pay its start-up (with no document
    opened within the idle time it stops again), and index the workspace in the background."""
    ls.worker.pool()
    ls.documents_changed()
    workspace.start(ls)


@server.feature(types.SHUTDOWN)
def shutdown(ls: GraphmendServer, *args: Any) -> None:
    ls.worker.close()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GraphmendServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if not settings:
        try:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="graphmend")])
            )
            settings = answer[0] if answer else None
        except Exception:  # noqa: BLE001 - a client without workspace/configuration
            settings = None
    ls.options = parse_options(settings)
    ls.reported_problems.clear()
    for uri in list(ls.workspace.text_documents):
        open_documents.schedule(ls, uri)
