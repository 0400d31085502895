"""The JSON-RPC side of the server, answering every request as LSP 3.17 asks.

pygls leaves some requests without any response: one that fails to deserialize (a code action
without `range`, a negative position), one sent after `shutdown`, and a message whose body is not
UTF-8 (it is logged, and the client waits forever). Here every request gets an answer:

| request | answer |
|---|---|
| before `initialize` | -32002 ServerNotInitialized (notifications are dropped) |
| after `shutdown` | -32600 InvalidRequest (notifications but `exit` are dropped) |
| params that do not fit the method | -32602 InvalidParams |
| a body that is not UTF-8 | -32700 ParseError, to the id when it can be read; else a logged error |

and `exit` ends the process with 0 after `shutdown`, 1 without it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Generator
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger("graphmend.lsp")

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
UNDECODABLE = "$/graphmend/undecodable"  # what an undecodable body becomes, to be answered in order
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


class _Rejected:
    """A request that cannot be structured: answered with its error, handled no further."""

    def __init__(self, msg_id: Any, error: JsonRpcException) -> None:
        self.id = msg_id
        self.error = error


class GraphmendProtocol(LanguageServerProtocol):
    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._initialize_seen = False
        self.exit_code = 0

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict) and data.get("method") == UNDECODABLE:
            return _Rejected(data.get("id"), JsonRpcParseError("the message is not valid UTF-8"))
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Rejected(data["id"], error)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Rejected):
            if message.id is not None:  # with no id to answer, it was logged where it was read
                self._send_response(message.id, None, message.error.to_response_error())
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        is_request = method is not None and msg_id is not None
        if method == types.INITIALIZE:
            self._initialize_seen = True
        elif not self._initialize_seen and method != types.EXIT and method is not None:
            if is_request:
                self._error(
                    msg_id, SERVER_NOT_INITIALIZED, "the server is not initialized yet: send `initialize` first"
                )
            return
        if self._shutdown and method != types.EXIT and method is not None:
            if is_request:
                self._error(msg_id, INVALID_REQUEST, "the server is shutting down: only `exit` is accepted")
            return
        super().handle_message(message)

    def _error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_response(msg_id, None, types.ResponseError(code=code, message=message))

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """Exit 0 after `shutdown`, 1 without (the code `graphmend-lsp` returns)."""
        self.exit_code = 0 if self._shutdown else 1
        yield from super().lsp_exit(*args)


class Utf8CheckingInput:
    """stdin for the server: a message body that is not UTF-8 is replaced by an `UNDECODABLE`
    message carrying its id, so that the protocol answers it (pygls would only log it)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        return self.stream.readline()

    def read(self, size: int) -> bytes:
        body = self.stream.read(size)
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as error:
            match = _ID.search(body)
            log.error("graphmend-lsp: a message body is not valid UTF-8 (%s)", error)
            substitute: dict[str, Any] = {"jsonrpc": "2.0", "method": UNDECODABLE}
            if match is not None:
                substitute["id"] = json.loads(match.group(1))
            return json.dumps(substitute).encode("utf-8")
        return body

    def close(self) -> None:
        self.stream.close()


__all__ = ["GraphmendProtocol", "Utf8CheckingInput"]
