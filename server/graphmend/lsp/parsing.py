"""One parse at a time in the server process.

CPython before 3.13 keeps the AST constructor's recursion depth in interpreter state that threads
share, so two threads turning a parse into `ast` objects at once can fail with `SystemError: AST
constructor recursion depth mismatch` (cpython#106905). The server parses on the event loop (a
request for a version the worker has not analysed yet) and on its executor threads (a document's
summary for the index): seen in CI's keystroke replay as a request answered with that error. The
analysis workers are processes of one thread each and need nothing.
"""

from __future__ import annotations

import ast
import sys
import threading
from typing import Any

_LOCK = threading.Lock()
_PARSE = ast.parse


def _one_at_a_time(*args: Any, **kwargs: Any) -> Any:
    with _LOCK:
        return _PARSE(*args, **kwargs)


def install() -> None:
    """Make `ast.parse` (and what calls it, `ast.literal_eval`) take turns in this process."""
    if sys.version_info < (3, 13):
        ast.parse = _one_at_a_time


def installed() -> bool:
    return ast.parse is _one_at_a_time
