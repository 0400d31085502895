"""Keystroke replay: drive graphmend-lsp over stdio the way an editor does, on real model files.

    python tests/replay.py [--all | --sample N] [--edits K] [--seed S] [--index]

For every file: open it, then apply a stream of incremental edits that delete a chunk of lines and
put it back (syntax errors on the way), asking for code actions and hovers along the way, then
close it. Checks: no error response, the server never exits, diagnostics are only ever published
for the version the editor has (never an older one after a newer), and the server's memory after
closing everything (the server and its analysis worker together) is within 20% of what it was after
a warm-up of the first five files (which start the worker and load the rewrite code). With
`--index` the transformers package is the workspace: the server indexes its 1,700 files first and
every analysis runs in that project's context (`sampled_package` makes a smaller one: the package
with only the replayed files' model folders).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

WARM_UP = 5  # files: lazy imports (LibCST's native parser, rewrite code) happen here, then memory is measured


@dataclass
class Report:
    files: int = 0
    edits: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    stale_publications: list[str] = field(default_factory=list)
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    seconds: float = 0.0
    rss_marks: list[float] = field(default_factory=list)
    server_alive: bool = True
    index_message: str = ""

    @property
    def ok(self) -> bool:
        return (
            not self.errors
            and not self.stale_publications
            and self.server_alive
            and self.rss_end_mb <= 1.2 * self.rss_start_mb
        )


def model_files() -> list[Path]:
    import transformers

    return sorted((Path(transformers.__file__).parent / "models").rglob("modeling_*.py"))


def _rss_mb(pid: int) -> float:
    """Resident memory of the server and every process it started (its analysis worker)."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += _rss_mb(int(child))
    except (OSError, ValueError):
        pass
    return total


def _children(pid: int) -> list[str]:
    """The processes the server started that still run (its analysis worker)."""
    try:
        return [c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:
        return []


def package_root() -> Path:
    import transformers

    return Path(transformers.__file__).parent


def sampled_package(files: list[Path], folder: Path) -> list[Path]:
    """A copy of the transformers package in `folder` with only the model folders of `files` (its
    other 240 modules all there), and where `files` are in it: a workspace a fifth of the package's
    size, whose index is built in a fifth of the time."""
    package = package_root()
    kept = {path.parent.name for path in files}

    def ignored(directory: str, names: list[str]) -> set[str]:
        skipped = {"__pycache__"}
        if Path(directory) == package / "models":
            skipped |= {name for name in names if (Path(directory) / name).is_dir() and name not in kept}
        return skipped & set(names)

    copy = folder / "transformers"
    shutil.copytree(package, copy, ignore=ignored)
    return [copy / path.relative_to(package) for path in files]


async def replay(files: list[Path], edits: int, seed: int, rounds: int = 1, index: Path | None = None) -> Report:
    """With `index` (a folder: the transformers package, or a `sampled_package`), that folder is the
    workspace: the server indexes it in the background, and the replay starts once the index is
    built (every analysis then uses it)."""
    report = Report()
    rng = random.Random(seed)
    client = LanguageClient("graphmend-replay", "1")
    latest_published: dict[str, int] = {}
    sent_version: dict[str, int] = {}
    published = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        uri, version = params.uri, params.version
        if version is not None:
            if version < latest_published.get(uri, -1) or version > sent_version.get(uri, -1):
                report.stale_publications.append(f"{uri}: v{version} after v{latest_published.get(uri)}")
            latest_published[uri] = max(version, latest_published.get(uri, -1))
        published.set()

    indexed = asyncio.Event()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        if params.message.startswith("graphmend: indexed "):
            report.index_message = params.message
            indexed.set()

    await client.start_io(sys.executable, "-m", "graphmend.lsp", "--stdio")
    pid = client._server.pid
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
            ),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True),
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
        ),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=capabilities,
            initialization_options={"debounce": 5, "workerIdleSeconds": 0.5, "index": index is not None},
            root_uri=index.as_uri() if index else None,
            workspace_folders=[types.WorkspaceFolder(uri=index.as_uri(), name="transformers")] if index else None,
        )
    )
    client.initialized(types.InitializedParams())
    if index is not None:
        try:
            await asyncio.wait_for(indexed.wait(), 180)
        except asyncio.TimeoutError:
            report.errors.append("the workspace index was not built within 180 s")
    start = time.perf_counter()

    async def request(coroutine) -> object:  # noqa: ANN001
        report.requests += 1
        try:
            return await asyncio.wait_for(coroutine, 60)
        except Exception as error:  # noqa: BLE001 - every failure is a finding
            report.errors.append(f"{type(error).__name__}: {error}")
            return None

    for number, path in enumerate(files * rounds):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        uri = path.as_uri()
        version = 1
        sent_version[uri] = version
        latest_published.pop(uri, None)  # a reopened document starts its versions again
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
        )
        for _ in range(edits):
            first = rng.randrange(0, max(1, len(lines) - 1))
            count = rng.randint(1, min(12, len(lines) - first))
            chunk = "\n".join(lines[first : first + count]) + "\n"
            end = types.Position(first + count, 0)
            for change in (
                types.TextDocumentContentChangePartial(range=types.Range(types.Position(first, 0), end), text=""),
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(first, 0), types.Position(first, 0)), text=chunk
                ),
            ):
                version += 1
                sent_version[uri] = version
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change]
                    )
                )
                report.edits += 1
                position = types.Position(rng.randrange(0, len(lines)), rng.randrange(0, 20))
                if rng.random() < 0.5:
                    actions = await request(
                        client.text_document_code_action_async(
                            types.CodeActionParams(
                                text_document=types.TextDocumentIdentifier(uri=uri),
                                range=types.Range(position, position),
                                context=types.CodeActionContext(diagnostics=[]),
                            )
                        )
                    )
                    for action in (actions or [])[:2]:
                        if isinstance(action, types.CodeAction) and action.edit is None:
                            await request(client.code_action_resolve_async(action))
                else:
                    await request(
                        client.text_document_hover_async(
                            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
                        )
                    )
        deadline = time.perf_counter() + 30
        while latest_published.get(uri) != version and time.perf_counter() < deadline:
            published.clear()
            try:
                await asyncio.wait_for(published.wait(), 1)
            except asyncio.TimeoutError:
                pass
        if latest_published.get(uri) != version:
            report.errors.append(f"{path.name}: the final version {version} never got diagnostics")
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        report.files += 1
        if number % 10 == 9 or number == WARM_UP - 1:
            await asyncio.sleep(0.2)
            report.rss_marks.append(_rss_mb(pid))
        if number == WARM_UP - 1:
            report.rss_start_mb = report.rss_marks[-1]
    # Past workerIdleSeconds, with nothing open, the worker is stopped: wait for that (a slow machine
    # takes longer than a fixed pause) so the end figure is the server's own, like the start's.
    deadline = time.perf_counter() + 30
    while _children(pid) and time.perf_counter() < deadline:
        await asyncio.sleep(0.25)
    report.server_alive = client._server.returncode is None
    report.rss_end_mb = _rss_mb(pid) if report.server_alive else 0.0
    report.seconds = time.perf_counter() - start
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="every modeling file of transformers 4.49.0")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--edits", type=int, default=6, help="delete/re-insert pairs per file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="replay the files this many times in one session")
    parser.add_argument("--index", action="store_true", help="the transformers package as the workspace, indexed first")
    args = parser.parse_args()
    files = model_files()
    if not args.all:
        files = random.Random(args.seed).sample(files, min(args.sample, len(files)))
    report = asyncio.run(replay(files, args.edits, args.seed, args.rounds, package_root() if args.index else None))
    print(
        f"files {report.files}, edits {report.edits}, requests {report.requests}, errors {len(report.errors)}, "
        f"stale publications {len(report.stale_publications)}, server alive {report.server_alive}, "
        f"RSS {report.rss_start_mb:.0f} MB after {WARM_UP} files -> {report.rss_end_mb:.0f} MB at the end "
        f"(marks {', '.join(f'{m:.0f}' for m in report.rss_marks)}), {report.seconds:.0f} s"
        + (f"; {report.index_message.removeprefix('graphmend: ')}" if report.index_message else "")
    )
    for problem in [*report.errors, *report.stale_publications][:20]:
        print("  ", problem)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
