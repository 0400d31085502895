"""Editor latency of graphmend-lsp: didChange → publishDiagnostics, and code-action round trips.

    python benchmarks/lsp_latency.py [FILE ...] [--edits 7]

Starts `graphmend-lsp --stdio` (debounce 0, so the figure is processing time, not the deliberate
typing delay), opens each file and sends `--edits` incremental edits, timing each from the
didChange notification to the publishDiagnostics for that version. In the same run it times
LibCST's `parse_module` of the same text, and prints medians and their ratio (goal ≤ 2.0), then
the median code-action response time at a flagged line (goal ≤ 50 ms).
Default files: transformers 4.49.0's modeling_longformer.py, modeling_t5.py, modeling_phi3.py.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import libcst
from lsprotocol import types
from pygls.lsp.client import LanguageClient


def default_files() -> list[Path]:
    import transformers  # only to locate its sources

    models = Path(transformers.__file__).parent / "models"
    return [models / "longformer/modeling_longformer.py", models / "t5/modeling_t5.py", models / "phi3/modeling_phi3.py"]


async def measure(files: list[Path], edits: int) -> int:
    client = LanguageClient("graphmend-latency", "1")
    published: dict[tuple[str, int | None], float] = {}
    flagged: dict[str, int] = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published[(params.uri, params.version)] = time.perf_counter()
        if params.diagnostics:
            flagged[params.uri] = params.diagnostics[0].range.start.line
        arrived.set()

    await client.start_io(sys.executable, "-m", "graphmend.lsp", "--stdio")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"graphmend": {"debounce": 0}},
        )
    )
    client.initialized(types.InitializedParams())
    print(f"{'file':<26} {'lines':>6} {'parse_module ms':>16} {'didChange→diagnostics ms':>25} {'ratio':>6} {'code action ms':>15}")
    worst = 0.0
    slowest_action = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8")
        uri = path.as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        while (uri, 1) not in published:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 60)
        latencies, parses = [], []
        for version in range(2, edits + 2):
            line = (version * 37) % max(1, text.count("\n"))
            change = types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, 0), types.Position(line, 0)), text=f"# edit {version}\n"
            )
            text = "\n".join(text.split("\n")[:line] + [f"# edit {version}"] + text.split("\n")[line:])
            start = time.perf_counter()
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
            )
            while (uri, version) not in published:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 60)
            latencies.append(published[(uri, version)] - start)
            parse_start = time.perf_counter()
            libcst.parse_module(text)
            parses.append(time.perf_counter() - parse_start)
        action_times = []
        flagged_line = flagged.get(uri, 0)
        for _ in range(edits):
            start = time.perf_counter()
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(types.Position(flagged_line, 0), types.Position(flagged_line, 0)),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            action_times.append(time.perf_counter() - start)
        latency, parse = statistics.median(latencies) * 1000, statistics.median(parses) * 1000
        action = statistics.median(action_times) * 1000
        worst, slowest_action = max(worst, latency / parse), max(slowest_action, action)
        print(f"{path.name:<26} {text.count(chr(10)):>6} {parse:>16.1f} {latency:>25.1f} {latency / parse:>6.2f} {action:>15.1f}")
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    print(f"worst ratio {worst:.2f} (goal <= 2.0); slowest median code action {slowest_action:.1f} ms (goal <= 50)")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--edits", type=int, default=7)
    args = parser.parse_args()
    return asyncio.run(measure(args.files or default_files(), args.edits))


if __name__ == "__main__":
    sys.exit(main())
