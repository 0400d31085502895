"""The workspace index while its background build runs (issue 32, point 9): the open documents are
analysed with the last project built, not after a rebuild per batch of summaries (each keystroke
waited 0.3 s for one on transformers); a change of an open document's call graph still rebuilds it,
and the build's end does too."""

from __future__ import annotations

from pathlib import Path

from graphmend.api import summarize_source
from graphmend.lsp.index import WorkspaceIndex

HELPER = "import torch\n\n\ndef helper(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
MODEL = "import torch\nfrom helper import helper\n\n\n@torch.compile\ndef run(x):\n    return helper(x)\n"


def _summary(tmp_path: Path, name: str, text: str):  # noqa: ANN202
    path = tmp_path / name
    path.write_text(text)
    summary = summarize_source(text, path)
    assert summary is not None
    return path, summary


def test_a_batch_of_the_build_does_not_make_open_documents_wait(tmp_path: Path) -> None:
    index = WorkspaceIndex()
    index.roots = [tmp_path]
    model, model_summary = _summary(tmp_path, "model.py", MODEL)
    index.update(model, model_summary, from_open_document=True)
    assert index.stale
    first = index.project  # built for the first analysis
    helper, helper_summary = _summary(tmp_path, "helper.py", HELPER)
    assert index.update(helper, helper_summary, from_open_document=False)  # a batch of the build
    assert not index.stale and index.context_for(model) == first.context_for(index.key(model))
    moved = "\n" + MODEL  # the open document's edit moves lines only: still no rebuild
    index.update(model, summarize_source(moved, model), from_open_document=True)
    assert not index.stale
    index.built = True  # the build's end: the project is rebuilt with every summary
    assert index.stale
    assert index.context_for(helper) != first.context_for(index.key(helper))  # helper is now compiled code


def test_an_open_document_that_changes_the_call_graph_rebuilds_at_once(tmp_path: Path) -> None:
    index = WorkspaceIndex()
    index.roots = [tmp_path]
    model, model_summary = _summary(tmp_path, "model.py", MODEL)
    index.update(model, model_summary, from_open_document=True)
    index.context_for(model)  # the first analysis builds the project
    helper, helper_summary = _summary(tmp_path, "helper.py", HELPER)
    index.update(helper, helper_summary, from_open_document=False)
    uncompiled = MODEL.replace("@torch.compile\n", "")
    assert index.update(model, summarize_source(uncompiled, model), from_open_document=True)
    assert index.stale
