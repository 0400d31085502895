"""The workspace index on a large package: build time, server memory, re-index after one change.

    python benchmarks/index_scale.py [PACKAGE_DIR]   (default: the installed transformers)

The package is copied to a temporary folder, which becomes the workspace (`rootUri`) of a fresh
`graphmend-lsp --stdio`; the client shows progress, so the build's `$/progress` end is the
moment it is done. Then one file is changed on disk (a call added to a helper, so its call graph
changes) and announced with `workspace/didChangeWatchedFiles`; the server's "re-indexed" log line
gives the time. Memory: the server's own RSS from /proc (the build's worker processes exist only
while it runs), at the end and at its peak (VmHWM).
"""

from __future__ import annotations

import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Client:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graphmend.lsp", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buffer = b""
        self.next_id = 0

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> None:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})

    def wait(self, predicate, timeout: float = 300.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    message = json.loads(rest[:length])
                    if "method" in message and "id" in message:
                        self.send({"id": message["id"], "result": None})
                    if predicate(message):
                        return message
                    continue
            assert self.process.stdout is not None
            ready, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if ready:
                self.buffer += os.read(self.process.stdout.fileno(), 1 << 20)
        raise TimeoutError


def memory(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def main() -> None:
    if len(sys.argv) > 1:
        source = pathlib.Path(sys.argv[1])
    else:
        import transformers  # noqa: F401 - only to find it

        source = pathlib.Path(transformers.__file__).parent
    with tempfile.TemporaryDirectory() as folder:
        workspace = pathlib.Path(folder, source.name)
        shutil.copytree(source, workspace, ignore=shutil.ignore_patterns("__pycache__"))
        files = sum(1 for _ in workspace.rglob("*.py"))
        client = Client()
        started = time.perf_counter()
        client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {
                    "window": {"workDoneProgress": True},
                    "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
                },
            },
        )
        client.send({"method": "initialized", "params": {}})
        end = client.wait(lambda m: m.get("method") == "$/progress" and m["params"]["value"].get("kind") == "end")
        built = time.perf_counter() - started
        rss, peak = memory(client.process.pid)
        print(
            f"{source.name}: {files} files; index built in {built:.1f} s ({end['params']['value'].get('message')}); "
            f"server RSS {rss:.0f} MB, peak {peak:.0f} MB"
        )
        helper = workspace / "pytorch_utils.py"
        helper.write_text(
            helper.read_text() + "\n\ndef _graphmend_probe(x):\n    return apply_chunking_to_forward(x)\n"
        )
        for attempt in range(3):
            client.send(
                {
                    "method": "workspace/didChangeWatchedFiles",
                    "params": {"changes": [{"uri": helper.as_uri(), "type": 2}]},
                }
            )
            log = client.wait(
                lambda m: m.get("method") == "window/logMessage" and "re-indexed" in m["params"]["message"]
            )
            print(f"one changed file: {log['params']['message']}")
            helper.write_text(
                helper.read_text() + f"\n\ndef _graphmend_probe_{attempt}(x):\n    return _graphmend_probe(x)\n"
            )
        rss, peak = memory(client.process.pid)
        print(f"server RSS after: {rss:.0f} MB, peak {peak:.0f} MB")
        client.request("shutdown", {})
        client.send({"method": "exit"})
        client.process.wait(10)


if __name__ == "__main__":
    main()
