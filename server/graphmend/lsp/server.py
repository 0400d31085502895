"""`graphmend-lsp`: graphmend in any LSP editor. The server instance with every handler registered.

State and conversions are in `state.py`; each concern's handlers in their own module, imported
here so that importing this module gives a complete server.
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
    workspace,
)
from .state import GraphmendServer, server

__all__ = ["GraphmendServer", "server"]
