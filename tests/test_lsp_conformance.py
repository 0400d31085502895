"""The server over its whole lifecycle, from a raw JSON-RPC client: every request gets an answer.

The client writes bytes on `graphmend-lsp --stdio` (framing, invalid UTF-8 and malformed messages
included) and fails a test as soon as a request is left unanswered for longer than `TIMEOUT`.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 10.0
SERVER = [sys.executable, "-m", "graphmend.lsp", "--stdio"]
FIGURE1 = (Path(__file__).resolve().parent.parent / "examples" / "figure1.py").read_text(encoding="utf-8")


class RawClient:
    """A JSON-RPC peer on the server's stdin/stdout, reading with a deadline."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.notifications: list[dict[str, Any]] = []
        self.next_id = 100

    def write(self, body: bytes, header: bytes | None = None) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8"))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({} if params is None else {"params": params})})

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, **({} if params is None else {"params": params})})
        return self.response(self.next_id)

    def response(self, msg_id: Any) -> dict[str, Any]:
        """The response to `msg_id`; the test fails when none comes in time."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            message = self._read(deadline)
            if message is None:
                break
            if "id" in message and "method" not in message and message["id"] == msg_id:
                return message
            if "method" in message and "id" not in message:
                self.notifications.append(message)
        pytest.fail(f"no response to request {msg_id!r} within {TIMEOUT} s")

    def notification(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            found = next((n for n in self.notifications if n["method"] == method), None)
            if found is not None:
                self.notifications.remove(found)
                return found
            message = self._read(deadline)
            if message is not None and "method" in message and "id" not in message:
                self.notifications.append(message)
        pytest.fail(f"no {method} notification within {TIMEOUT} s")

    def _read(self, deadline: float) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while time.monotonic() < deadline:
            head, separator, rest = self.buffer.partition(b"\r\n\r\n")
            if separator:
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    return json.loads(rest[:length])
            ready, _, _ = select.select([descriptor], [], [], 0.05)
            if ready:
                chunk = os.read(descriptor, 1 << 16)
                if not chunk:
                    return None
                self.buffer += chunk
        return None

    def initialize(self) -> dict[str, Any]:
        result = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})

    def exit_code(self) -> int:
        try:
            return self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the server did not exit within {TIMEOUT} s")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def client() -> RawClient:
    peer = RawClient()
    yield peer
    peer.close()


def _hover(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_a_request_before_initialize_is_refused_and_initialize_still_works(client: RawClient) -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///early.py", "languageId": "python", "version": 1, "text": "x"}})
    early = client.request("textDocument/hover", _hover("file:///early.py"))
    assert early["error"]["code"] == -32002
    result = client.initialize()
    assert "capabilities" in result["result"]


def test_requests_after_shutdown_are_invalid_and_exit_ends_with_zero(client: RawClient) -> None:
    client.initialize()
    assert client.request("shutdown")["result"] is None
    late = client.request("textDocument/hover", _hover("file:///late.py"))
    assert late["error"]["code"] == -32600
    client.notify("exit")
    assert client.exit_code() == 0


def test_exit_without_shutdown_ends_with_one(client: RawClient) -> None:
    client.initialize()
    client.notify("exit")
    assert client.exit_code() == 1


def test_malformed_params_unknown_methods_and_unopened_documents_are_answered(client: RawClient) -> None:
    client.initialize()
    no_range = client.request("textDocument/codeAction", {"textDocument": {"uri": "file:///x.py"}, "context": {"diagnostics": []}})
    assert no_range["error"]["code"] == -32602
    negative = client.request("textDocument/hover", _hover("file:///x.py", -1, 0))
    assert negative["error"]["code"] == -32602
    unknown = client.request("graphmend/noSuchMethod", {})
    assert unknown["error"]["code"] == -32601
    # Never opened: nothing is read from disk for it (the path may not exist, or be a FIFO).
    assert client.request("textDocument/hover", _hover("file:///never/opened.py"))["result"] is None
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": "file:///never/opened.py"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    })
    assert actions["result"] == []


def test_invalid_utf8_and_broken_framing_do_not_stop_the_server(client: RawClient) -> None:
    client.initialize()
    client.write(b'{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x\xff.py"},'
                 b'"position":{"line":0,"character":0}}}')
    assert client.response(7)["error"]["code"] == -32700
    client.write(b'{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"\xfe"}}')  # no id: logged only
    client.write(b"{not json at all")
    client.write(b"", header=b"X-Garbage: yes\r\n\r\n")
    assert client.request("textDocument/hover", _hover("file:///x.py"))["result"] is None


def test_duplicate_opens_and_changes_to_unopened_documents(client: RawClient) -> None:
    client.initialize()
    uri = "file:///tmp/graphmend-conformance/figure1.py"
    client.open(uri, "import torch\n")
    client.open(uri, FIGURE1, version=2)  # the second open replaces the first
    diagnostics = client.notification("textDocument/publishDiagnostics")
    while diagnostics["params"].get("version") != 2:
        diagnostics = client.notification("textDocument/publishDiagnostics")
    assert [d["code"] for d in diagnostics["params"]["diagnostics"]] == ["GM101"]
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": "file:///never/opened.py", "version": 3},
        "contentChanges": [{"text": "x = 1\n"}],
    })
    assert client.request("textDocument/hover", _hover(uri, 9, 8))["result"] is not None
