"""JupyterLab: jupyter-lsp finds graphmend through its `jupyter_lsp_spec_v1` entry point (the real
JupyterLab test is `editors/jupyterlab/run-e2e.sh`, run by CI)."""

from __future__ import annotations

import subprocess
from importlib.metadata import entry_points

from graphmend.jupyter import spec


def test_jupyter_lsp_finds_the_spec_through_the_entry_point() -> None:
    (found,) = [e for e in entry_points(group="jupyter_lsp_spec_v1") if e.name == "graphmend"]
    assert found.load() is spec


def test_the_spec_starts_this_python_s_graphmend_language_server() -> None:
    (server,) = spec(manager=None).values()
    assert server["languages"] == ["python"] and server["argv"][-1] == "--stdio"
    version = subprocess.run([*server["argv"][:-1], "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("graphmend-lsp ")
