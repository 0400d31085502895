"""In the editor, as in the CLI: a torch alias a library re-exports types its annotations, a library
parameter no call passes keeps its default, and the torch release the project pins decides what
breaks (VS Code's and Neovim's client capabilities; see test_libraries.py and test_torch_version.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import open_document
from pytest_lsp import LanguageClient
from test_libraries import write_auglib, write_divlib
from test_lsp_project import _client, _until

TRAIN = (
    "import torch\n"
    "from torch import nn\n"
    "\n"
    "from auglib import Crop\n"
    "from divlib import safe_divide\n"
    "\n"
    "\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.crop = Crop()\n"
    "\n"
    "    def forward(self, x, lengths: torch.Tensor):\n"
    "        sizes = lengths.tolist()\n"  # line 14: breaks on torch 2.13, not on the pinned 2.9
    "        x = self.crop(x)\n"  # line 15: auglib's `int(params["n"])`
    "        return safe_divide(x + 1, x), sizes\n"  # line 16: `zero_division` never passed
    "\n"
    "\n"
    "model = torch.compile(Model())\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write_divlib(write_auglib(project / ".venv" / "site-packages"))  # a project's library-paths stay in it
    (project / "train.py").write_text(TRAIN)
    (project / "pyproject.toml").write_text(
        '[tool.graphmend]\nfollow-libraries = true\nlibrary-paths = [".venv/site-packages"]\n'
    )
    (project / "requirements.txt").write_text("torch==2.9.1\n")
    return project


client = _client(closed_files=False)


async def test_aliases_defaults_and_the_pinned_torch(client: LanguageClient, workspace: Path) -> None:
    train = workspace / "train.py"
    open_document(client, train.as_uri(), train.read_text())
    found = await _until(client, train.as_uri(), lambda d: any(x.code == "GM301" for x in d))
    assert [(str(d.code), d.range.start.line + 1) for d in found] == [("GM301", 15)]
    assert found[0].message.startswith("`auglib.crop.Crop.forward` breaks the graph in auglib/crop.py:13")
