"""Jupyter notebooks in the language server (issue 15, item 2): LSP 3.17 notebook document sync,
diagnostics per cell, quick fixes and fix-all as edits on the right cells, under VS Code's and
Neovim's client capabilities."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from conftest import ROOT
from lsp_helpers import accept_registrations, apply_edits, code_actions, text_edits, uses_pull
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

IMPORTS = "%matplotlib inline\nimport logging\nimport torch\n\nlogger = logging.getLogger(__name__)"
# `**options`: TorchScript could not compile gate
MODEL = """@torch.compile
def gate(x, **options):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x + 1
    print("gated")
    return y"""
RUN = "%time out = gate(torch.ones(3))"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "graphmend.lsp", "--stdio"]),
    params=["visual_studio_code", "neovim"],
)
async def client(request, lsp_client: LanguageClient):
    accept_registrations(lsp_client)
    capabilities = client_capabilities(request.param)
    # Notebook sync is offered to clients that declare it (VS Code since 1.74); these recorded sets predate it.
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=ROOT.as_uri(),
            initialization_options={"graphmend": {"debounce": 20, "index": False}},
        )
    )
    sync = result.capabilities.notebook_document_sync
    assert sync is not None and sync.notebook_selector[0].notebook.notebook_type == "jupyter-notebook"
    encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    lsp_client.encoding = "utf-8" if encoding == types.PositionEncodingKind.Utf8 else "utf-16"
    yield
    await lsp_client.shutdown_session()


class Notebook:
    """A notebook as an editor holds it: cell documents with their text and version."""

    def __init__(self, client: LanguageClient, folder: Path, cells: list[tuple[str, str]]) -> None:
        self.client = client
        path = folder / "demo.ipynb"
        path.write_text("{}", encoding="utf-8")
        self.uri = path.as_uri()
        self.kinds = [kind for kind, _ in cells]
        self.texts = [text for _, text in cells]
        self.versions = [1] * len(cells)
        self.cell_uris = [f"vscode-notebook-cell:{path.as_posix()}#cell{n}" for n in range(len(cells))]
        self.version = 1
        self.seen: dict[str, int] = {}  # pushes per cell already read

    def open(self) -> None:
        kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
        cells = [types.NotebookCell(kind=kinds[k], document=u) for k, u in zip(self.kinds, self.cell_uris)]
        items = [
            types.TextDocumentItem(uri=u, language_id="python" if k == "code" else "markdown", version=1, text=t)
            for u, k, t in zip(self.cell_uris, self.kinds, self.texts)
        ]
        self.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=self.uri, notebook_type="jupyter-notebook", version=1, cells=cells
                ),
                cell_text_documents=items,
            )
        )

    def edit(self, index: int, text: str) -> None:
        self.change({index: text})

    def change(self, texts: dict[int, str]) -> None:
        """One notebook change event with new text for these cells."""
        self.version += 1
        contents = []
        for index, text in texts.items():
            self.versions[index] += 1
            self.texts[index] = text
            contents.append(
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(
                        uri=self.cell_uris[index], version=self.versions[index]
                    ),
                    changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        self.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(text_content=contents)
                ),
            )
        )

    def apply(self, edit: types.WorkspaceEdit) -> list[int]:
        """Apply a workspace edit to the cells it names (at the versions it was made for), as one
        change of the notebook; the cells changed."""
        texts = {}
        for index, uri in enumerate(self.cell_uris):
            edits, version = text_edits(edit, uri)
            if not edits:
                continue
            assert version in (None, self.versions[index]), "an edit for another version of the cell"
            texts[index] = apply_edits(self.texts[index], edits, self.client.encoding)
        self.change(texts)
        return sorted(texts)

    async def diagnostics(self) -> dict[int, list[types.Diagnostic]]:
        """Each code cell's diagnostics as the editor shows them (pulled, or pushed for this version)."""
        found = {}
        for index, (kind, uri) in enumerate(zip(self.kinds, self.cell_uris)):
            if kind != "code":
                continue
            if uses_pull(self.client):
                report = await self.client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
                )
                found[index] = list(report.items)
            else:  # a push for this version of the notebook: one per cell, after the last change
                pushes = self.client.pushes
                while pushes.get(uri, (0, None))[0] <= self.seen.get(uri, 0) or pushes[uri][1] != self.versions[index]:
                    await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
                self.seen[uri] = pushes[uri][0]
                found[index] = list(self.client.diagnostics[uri])
        return found


def track_versions(client: LanguageClient) -> None:
    """Count the pushes per document and keep the version of the last one, to wait for a fresh one
    (pytest-lsp's own handler keeps only the diagnostics: it is wrapped, not replaced)."""
    client.pushes = {}
    features = client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def published(params: types.PublishDiagnosticsParams) -> None:
        keep(params)
        count = client.pushes.get(params.uri, (0, None))[0]
        client.pushes[params.uri] = (count + 1, params.version)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = published


async def resolved(client: LanguageClient, action: types.CodeAction) -> types.CodeAction:
    return action if action.edit is not None else await client.code_action_resolve_async(action)


async def test_cells_are_one_module_with_diagnostics_per_cell(client: LanguageClient, tmp_path: Path) -> None:
    track_versions(client)
    notebook = Notebook(client, tmp_path, [("code", IMPORTS), ("markdown", "# Gate"), ("code", MODEL), ("code", RUN)])
    notebook.open()
    found = await notebook.diagnostics()
    assert found[0] == [] and found[3] == []  # magics masked, the `%time` call of a compiled function fine
    codes = [(d.code, d.range.start.line, d.range.start.character) for d in found[2]]
    assert codes == [("GM101", 2, 7), ("GM201", 6, 4)]  # `torch` comes from cell 1


async def test_quick_fixes_edit_the_right_cells(client: LanguageClient, tmp_path: Path) -> None:
    track_versions(client)
    notebook = Notebook(client, tmp_path, [("code", IMPORTS), ("markdown", "# Gate"), ("code", MODEL), ("code", RUN)])
    notebook.open()
    found = await notebook.diagnostics()
    branch = next(d for d in found[2] if d.code == "GM101")
    (fix,) = [a for a in await code_actions(client, notebook.cell_uris[2], branch) if "torch.where" in a.title]
    assert notebook.apply((await resolved(client, fix)).edit) == [2]  # only the model's cell
    assert "y = torch.where(cond, y_if, y_else)" in notebook.texts[2]
    found = await notebook.diagnostics()
    assert [d.code for d in found[2]] == ["GM201"]
    # The deferred print's helper goes after the imports in cell 1; the call changes in cell 3.
    logging_fix = next(a for a in await code_actions(client, notebook.cell_uris[2], found[2][0]) if "Defer" in a.title)
    assert notebook.apply((await resolved(client, logging_fix)).edit) == [0, 2]
    assert notebook.texts[0].startswith("%matplotlib inline\nimport logging") and "_deferred_print" in notebook.texts[0]
    assert '_deferred_print("gated")' in notebook.texts[2]
    assert all(cells == [] for cells in (await notebook.diagnostics()).values())


async def test_fix_all_in_a_notebook(client: LanguageClient, tmp_path: Path) -> None:
    track_versions(client)
    notebook = Notebook(client, tmp_path, [("code", IMPORTS), ("code", MODEL), ("code", RUN)])
    notebook.open()
    found = await notebook.diagnostics()
    actions = await code_actions(client, notebook.cell_uris[1], found[1][0])
    fix_all = next(a for a in actions if a.kind and a.kind.startswith(types.CodeActionKind.SourceFixAll))
    # Only the `if`'s fix is safe: a deferred print names what it drops (issue 50), so Fix All leaves it.
    assert notebook.apply((await resolved(client, fix_all)).edit) == [1]
    assert notebook.texts[2] == RUN
    assert [[d.code for d in cells] for cells in (await notebook.diagnostics()).values()] == [[], ["GM201"], []]


async def test_an_edit_in_one_cell_updates_another(client: LanguageClient, tmp_path: Path) -> None:
    """Renaming the import in cell 1 makes `torch.compile` in cell 2 unknown: its findings go."""
    track_versions(client)
    notebook = Notebook(client, tmp_path, [("code", IMPORTS), ("code", MODEL)])
    notebook.open()
    assert len((await notebook.diagnostics())[1]) == 2
    notebook.edit(0, IMPORTS.replace("import torch", "import numpy"))
    found = await notebook.diagnostics()  # cell 2 keeps its version; its diagnostics are published again
    assert found[1] == []


async def test_hover_in_a_cell(client: LanguageClient, tmp_path: Path) -> None:
    track_versions(client)
    notebook = Notebook(client, tmp_path, [("code", IMPORTS), ("code", MODEL)])
    notebook.open()
    await notebook.diagnostics()
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=notebook.cell_uris[1]),
            position=types.Position(line=2, character=9),
        )
    )
    assert hover is not None and "GM101" in hover.contents.value and "torch.where" in hover.contents.value
    nothing = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=notebook.cell_uris[0]),
            position=types.Position(line=1, character=2),
        )
    )
    assert nothing is None


HELPER = "def helper(x):\n    if x.sum() > 0:\n        return x + 1\n    return x * 0.5\n\n\ndef apply(fn, x):\n    return fn(x)"


async def test_a_run_recorded_in_the_kernel_shows_on_its_cell(client: LanguageClient, tmp_path: Path) -> None:
    """Issue 41: a run a `recording()` in the notebook's kernel wrote (its frame names the cell's
    code, `cell_key`) shows on the editor's cell with that code: the run shows the helper compiled,
    so its `if` is GM101's finding, confirmed, with GM101's quick fix; after the cell is edited
    there, the finding is gone."""
    import json

    from graphmend.record.log import cell_key

    track_versions(client)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    run = tmp_path / ".graphmend" / "runs" / "20261127-000000-1"
    run.mkdir(parents=True)
    frame = {"path": "/tmp/ipykernel_1/2.py", "line": 2, "func": "helper", "text": "if x.sum() > 0:"}
    event = {
        "id": "1", "kind": "graph_break", "reason": "Data-dependent branching: ...", "gb_type": "Data-dependent branching",
        "gb_id": "GB0170", "stack": "complete", "frames": [{**frame, "cell": cell_key(HELPER)}], "files": {},
    }  # fmt: skip
    (run / "process-1.jsonl").write_text(
        json.dumps({"header": {"started": 1.0, "torch": "2.13.0"}}) + "\n" + json.dumps(event) + "\n"
    )
    (run / "run.json").write_text(json.dumps({"started": 1.0, "ended": 2.0, "exit_code": 0}))
    cells = [("code", "import torch"), ("code", HELPER), ("code", "torch.compile(apply)(helper, torch.ones(2))")]
    notebook = Notebook(client, tmp_path, cells)
    notebook.open()
    found = await notebook.diagnostics()
    assert [(d.code, d.range.start.line) for d in found[1]] == [("GM101", 1)] and not found[0] and not found[2]
    assert found[1][0].data["run"]["count"] == 1
    (action,) = [a for a in await code_actions(client, notebook.cell_uris[1], found[1][0]) if "torch.where" in a.title]
    assert notebook.apply((await resolved(client, action)).edit) == [1]
    assert not (await notebook.diagnostics())[1]
