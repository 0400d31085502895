"""`graphmend-lsp`: graphmend in any LSP editor. The server instance with every handler registered.

The layout, for finding one's way:
  session/    the state (`state.GraphmendServer`) and what the server announces (`capabilities`)
  edit/       conversions to the protocol's types: locations, diagnostics, workspace edits
  schedule/   debounced per-document tasks, and the processes analyses run in
  open_documents, closed_files   what is analysed when, and published
  the handlers, one module per concern, imported here so that importing this module gives a
  complete server: lifecycle, documents, notebook_documents, pull, code_actions, hover, commands,
  workspace (the index), runs (recorded runs).
"""

from __future__ import annotations

from . import (  # noqa: F401  (register the handlers)
    code_actions,
    commands,
    documents,
    hover,
    lifecycle,
    notebook_documents,
    pull,
    runs,
    workspace,
)
from .session.state import GraphmendServer, server

__all__ = ["GraphmendServer", "server"]
