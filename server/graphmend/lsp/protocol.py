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
| a body over `MAX_MESSAGE_BYTES` | -32600 InvalidRequest, unread (see below) |

and `exit` ends the process with 0 after `shutdown`, 1 without it.

A message over `MAX_MESSAGE_BYTES` is never held whole (a 200 MB `didOpen` peaked the server at
1 GB: its bytes, their text, and the parsed document). It is read a piece at a time, keeping its
start and end, where its method and document are. A `didOpen` or `didChange` of such a document
becomes one whose text is `placeholder(size)`, which the analysis answers with one GM002 note; the
document's later changes are dropped until it is closed (the placeholder never takes an edit that
was meant for the real text, so no fix is ever computed on it). Any other such message is dropped,
and a request among them is answered with an error.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Generator
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol, lsp_method

from .oversize import MAX_MESSAGE_BYTES, placeholder

log = logging.getLogger("graphmend.lsp")

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
UNDECODABLE = "$/graphmend/undecodable"  # what an undecodable body becomes, to be answered in order
TOO_LARGE = "$/graphmend/tooLarge"  # what a request over MAX_MESSAGE_BYTES becomes, to be answered in order
DROPPED = "$/graphmend/dropped"  # what a dropped notification becomes: a `$/` one pygls ignores
_PIECE = 1 << 20  # how a message too large is read
_EDGE = 64 << 10  # how much of its start and of its end is kept: where its method and document are
_METHOD = re.compile(rb'(?<!\\)"method"\s*:\s*"([^"\\]*)"')
_URI = re.compile(rb'(?<!\\)"uri"\s*:\s*"((?:[^"\\]|\\.)*)"')
_VERSION = re.compile(rb'(?<!\\)"version"\s*:\s*(-?\d+)')
_LANGUAGE = re.compile(rb'(?<!\\)"languageId"\s*:\s*"([^"\\]*)"')
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
        if isinstance(data, dict) and data.get("method") == TOO_LARGE:
            limit = f"{MAX_MESSAGE_BYTES >> 20} MB"
            return _Rejected(data.get("id"), JsonRpcInvalidRequest(f"the message is over the {limit} graphmend reads"))
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
    message carrying its id, so that the protocol answers it (pygls would only log it); one over
    `MAX_MESSAGE_BYTES` is read in pieces and replaced (the module's docstring)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self._placeheld: dict[bytes, str] = {}  # documents that stand as a placeholder: uri as sent → uri

    def readline(self) -> bytes:
        return self.stream.readline()

    def read(self, size: int) -> bytes:
        if size > MAX_MESSAGE_BYTES:
            return self._too_large(size)
        body = self.stream.read(size)
        if self._placeheld and any(sent in body for sent in self._placeheld):
            body = self._after_placeholder(body)
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

    def _too_large(self, size: int) -> bytes:
        """A message of `size` bytes, read a piece at a time and never whole, replaced by what its
        start and end say it was (a document's opening or change: its placeholder)."""
        head, tail, left = b"", b"", size
        while left:
            piece = self.stream.read(min(_PIECE, left))
            if not piece:
                break
            left -= len(piece)
            head += piece[: max(0, _EDGE - len(head))]
            tail = (tail + piece)[-_EDGE:]
        found = {
            name: match.group(1)
            for name, pattern in (("method", _METHOD), ("uri", _URI), ("version", _VERSION), ("id", _ID))
            for match in [pattern.search(head) or pattern.search(tail)]
            if match is not None
        }
        method, uri, version = found.get("method"), found.get("uri"), found.get("version")
        log.warning("graphmend-lsp: a %s message of %d bytes was not read whole", (method or b"?").decode(), size)
        if "id" in found:
            return b'{"jsonrpc": "2.0", "method": "%s", "id": %s}' % (TOO_LARGE.encode(), found["id"])
        if uri is None or version is None or method not in (b"textDocument/didOpen", b"textDocument/didChange"):
            return b'{"jsonrpc": "2.0", "method": "%s"}' % DROPPED.encode()
        self._placeheld[uri] = json.loads(b'"' + uri + b'"')
        document = b'{"uri": "%s", "version": %s' % (uri, version)
        text = json.dumps(placeholder(size)).encode()
        if method == b"textDocument/didOpen":
            language = _LANGUAGE.search(head) or _LANGUAGE.search(tail)
            document += b', "languageId": "%s", "text": %s}' % (language.group(1) if language else b"python", text)
            params = b'{"textDocument": %s}' % document
        else:
            params = b'{"textDocument": %s}, "contentChanges": [{"text": %s}]}' % (document, text)
        return b'{"jsonrpc": "2.0", "method": "%s", "params": %s}' % (method, params)

    def _after_placeholder(self, body: bytes) -> bytes:
        """A message naming a document that stands as a placeholder: its changes are dropped (they
        are edits of the real text); closing or opening it again ends the placeholder."""
        try:
            message = json.loads(body)
            method = message.get("method")
            uri = message["params"]["textDocument"]["uri"]
        except (ValueError, KeyError, TypeError, AttributeError):
            return body
        if uri not in self._placeheld.values():
            return body
        if method == "textDocument/didChange":
            return b'{"jsonrpc": "2.0", "method": "%s"}' % DROPPED.encode()
        if method in ("textDocument/didClose", "textDocument/didOpen"):
            self._placeheld = {sent: known for sent, known in self._placeheld.items() if known != uri}
        return body


__all__ = ["GraphmendProtocol", "Utf8CheckingInput"]
