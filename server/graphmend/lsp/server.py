"""`graphmend-lsp`: graphmend in any LSP editor. The server instance with every handler registered.

State and conversions are in `state.py`; each concern's handlers in their own module, imported
here so that importing this module gives a complete server.
"""

from __future__ import annotations

from . import code_actions, commands, documents, hover, lifecycle, pull, workspace  # noqa: F401  (register the handlers)
from .state import GraphmendServer, server

__all__ = ["GraphmendServer", "server"]
