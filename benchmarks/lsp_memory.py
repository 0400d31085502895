"""Memory and latency of `graphmend-lsp` on large files: RSS per MB of source, and the size limit.

    python benchmarks/lsp_memory.py [--sizes 0.25,0.5,1,2,4,14]

For each size, a fresh server gets `didOpen` of a file made of transformers 4.49.0's
`modeling_bart.py` repeated (renamed per copy, so it stays valid Python) up to that size, and the
time to its `publishDiagnostics` and the peak RSS of the server and its analysis worker together
are read from /proc. Files over the `max-file-size-kb` limit (4 MB by default) are refused with one
GM002 note, without analysis.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB."""
    total = 0
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        children = []
    for process in [pid, *children]:
        try:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def wait_for_diagnostics(process: subprocess.Popen[bytes], timeout: float) -> tuple[dict | None, float]:
    """The publishDiagnostics notification, and the peak RSS seen while waiting for it."""
    assert process.stdout is not None
    buffer, peak = b"", 0.0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        peak = max(peak, rss_mb(process.pid))
        ready, _, _ = select.select([process.stdout.fileno()], [], [], 0.05)
        if not ready:
            continue
        buffer += os.read(process.stdout.fileno(), 1 << 20)
        while True:
            head, separator, rest = buffer.partition(b"\r\n\r\n")
            if not separator:
                break
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
            if len(rest) < length:
                break
            message, buffer = json.loads(rest[:length]), rest[length:]
            if message.get("method") == "textDocument/publishDiagnostics":
                return message, max(peak, rss_mb(process.pid))
    return None, peak


def source_of(megabytes: float, seed: str) -> str:
    """Valid Python of about `megabytes`: copies of a real model file, its classes and functions renamed per copy."""
    copies: list[str] = []
    size = 0
    while size < megabytes * 2**20:
        number = len(copies)
        copy = re.sub(r"^(class|def) (\w+)", rf"\g<1> \g<2>_{number}", seed, flags=re.MULTILINE)
        copies.append(copy)
        size += len(copy.encode("utf-8"))
    return "\n".join(copies)


def measure(text: str) -> tuple[float, float, float, list[str]]:
    server = [str(Path(sys.executable).with_name("graphmend-lsp")), "--stdio"]
    process = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    try:
        process.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}))
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        process.stdin.flush()
        time.sleep(1.0)
        base = rss_mb(process.pid)
        start = time.perf_counter()
        process.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": "file:///tmp/graphmend-large.py",
                            "languageId": "python",
                            "version": 1,
                            "text": text,
                        }
                    },
                }
            )
        )
        process.stdin.flush()
        message, peak = wait_for_diagnostics(process, 600)
        elapsed = time.perf_counter() - start
        codes = sorted({d["code"] for d in message["params"]["diagnostics"]}) if message else ["(none)"]
        return elapsed, base, peak, codes
    finally:
        process.kill()
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0.25,0.5,1,2,4,14", help="MB, comma-separated")
    args = parser.parse_args()
    import transformers

    seed = (Path(transformers.__file__).parent / "models" / "bart" / "modeling_bart.py").read_text(encoding="utf-8")
    print("| size MB | didOpen → diagnostics s | RSS before MB | peak RSS MB | MB of RSS per MB of source | codes |")
    print("|---:|---:|---:|---:|---:|---|")
    for megabytes in (float(s) for s in args.sizes.split(",")):
        text = source_of(megabytes, seed)
        size = len(text.encode("utf-8")) / 2**20
        elapsed, base, peak, codes = measure(text)
        print(
            f"| {size:.2f} | {elapsed:.2f} | {base:.0f} | {peak:.0f} | {(peak - base) / size:.0f} | {', '.join(codes[:6])} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
