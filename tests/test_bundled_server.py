"""The VS Code extension's bundled entry script (`vscode-extension/bundled/tool/graphmend_lsp.py`)
survives its own worker processes: they are started with multiprocessing's `spawn`, which re-runs
the script in each child, and without its `__main__` guard every child started a second server
reading the editor's stdin (JSONDecodeError in the output, then no hover, no quick fix and an
index stuck at 0 files). Here the script runs with its analysis worker and a workspace index, past
the first publish, and exactly one process reads the server's stdin."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

SCRIPT = ROOT / "vscode-extension" / "bundled" / "tool" / "graphmend_lsp.py"
FIGURE1 = (ROOT / "examples" / "figure1.py").read_text(encoding="utf-8")
HELPER = "import torch\n\n\ndef scale(x):\n    if x.sum() > 0:\n        return x * 2\n    return x\n"
CALLER = (
    "import torch\n\nfrom helper import scale\n\n\n@torch.compile\ndef run(x):\n    print(x)\n    return scale(x)\n"
)


class RawClient:
    """An editor on the other end of the server's pipes: Content-Length framed JSON-RPC, every
    request the server makes answered with null, every message kept in arrival order."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.messages: list[dict[str, Any]] = []
        self.undecodable: list[bytes] = []
        self._arrived = threading.Condition()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            body = out.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.undecodable.append(body)
                continue
            if "method" in message and "id" in message:  # a request of the server's: progress, registrations
                self.send({"id": message["id"], "result": None})
            with self._arrived:
                self.messages.append(message)
                self._arrived.notify_all()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def first(self, matches: Any, timeout: float) -> dict[str, Any] | None:
        with self._arrived:
            return self._arrived.wait_for(lambda: next(filter(matches, self.messages), None), timeout)

    def wait_for(self, what: str, matches: Any, timeout: float = 120) -> dict[str, Any]:
        found = self.first(matches, timeout)
        if not found:
            pytest.fail(
                f"no {what} within {timeout} s; the server sent: {[m.get('method', m.get('id')) for m in self.messages]}"
            )
        return found

    def responses(self, request_id: int) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("id") == request_id and "method" not in m]


READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(platform.machine())


def stdin_readers(server: subprocess.Popen[bytes]) -> list[int]:
    """The server and its descendants with a thread blocked reading file descriptor 0, the pipe
    the editor writes to (`/proc/PID/task/TID/syscall`: the call's number, then its first argument).
    Spawned workers inherit that descriptor; only a second server reads it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    family, todo = [], [server.pid]
    while todo:
        pid = todo.pop()
        family.append(pid)
        todo.extend(children.get(pid, []))
    reading = f"{READ_SYSCALL} 0x0 "
    readers = []
    for pid in family:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                if (task / "syscall").read_text().startswith(reading):
                    readers.append(pid)
                    break
            except OSError:
                continue
    return sorted(readers)


@pytest.mark.skipif(
    READ_SYSCALL is None or not Path("/proc/self/syscall").exists(),
    reason="reads Linux's /proc to find stdin's readers",
)
def test_the_bundled_entry_script_runs_one_server_with_its_workers_and_index(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "figure1.py").write_text(FIGURE1, encoding="utf-8")
    (workspace / "helper.py").write_text(HELPER, encoding="utf-8")
    (workspace / "caller.py").write_text(CALLER, encoding="utf-8")
    # The script puts ../libs (the .vsix's bundled packages) first on the path; here there are
    # none, so graphmend comes from this environment, as it does from those libs in the package.
    tool = tmp_path / "extension" / "bundled" / "tool"
    tool.mkdir(parents=True)
    script = tool / SCRIPT.name
    script.write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, str(script), "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workspace,
    )
    stderr: list[bytes] = []
    threading.Thread(target=lambda: stderr.extend(server.stderr or []), daemon=True).start()
    client = RawClient(server)
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "workspace"}],
                "capabilities": {"window": {"workDoneProgress": True}, "textDocument": {"hover": {}}},
            },
        )
        client.wait_for("initialize answer", lambda m: m.get("id") == init and "result" in m)
        client.send({"method": "initialized", "params": {}})
        uri = (workspace / "figure1.py").as_uri()
        client.send(
            {
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": FIGURE1}},
            }
        )
        published = client.wait_for(
            "diagnostics for figure1.py",
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"]["diagnostics"]
            ),
        )
        indexed = client.first(
            lambda m: m.get("method") == "$/progress" and m["params"]["value"].get("kind") == "end", timeout=60
        )
        # The index's processes and the analysis worker have started: one server reads stdin.
        readers = stdin_readers(server)
        assert readers == [server.pid], f"processes reading the editor's stdin: {readers}"
        assert indexed, (
            f"indexing did not end: {[m['params'] for m in client.messages if m.get('method') == '$/progress']}"
        )
        client.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [{"text": FIGURE1 + "\n# edited\n"}],
                },
            }
        )
        diagnostic = published["params"]["diagnostics"][0]
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": diagnostic["range"]["start"]}
        )
        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
        )
        client.wait_for("the hover", lambda m: m.get("id") == hover and "method" not in m)
        client.wait_for("the code actions", lambda m: m.get("id") == actions and "method" not in m)
        time.sleep(1)  # a second reader of stdin would have answered by now too
        assert stdin_readers(server) == [server.pid]
        assert [len(client.responses(i)) for i in (init, hover, actions)] == [1, 1, 1]
        assert "GM101" in json.dumps(client.responses(hover)[0]["result"])
        assert "torch.where" in json.dumps(client.responses(actions)[0]["result"])
        assert not client.undecodable
        shutdown = client.request("shutdown", None)
        client.wait_for("the shutdown answer", lambda m: m.get("id") == shutdown)
        client.send({"method": "exit"})
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    log = b"".join(stderr).decode(errors="replace")
    assert "Traceback" not in log and "JSONDecodeError" not in log, log
