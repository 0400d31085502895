"""graphmend in JupyterLab: the language server spec that jupyter-lsp finds through the
`jupyter_lsp_spec_v1` entry point, so installing graphmend next to `jupyterlab-lsp` is all it takes
(docs/editors.md). jupyterlab-lsp sends a notebook to the server as one Python document of its
cells, and shows the diagnostics and hovers back in the cells."""

from __future__ import annotations

import sys

SPEC_VERSION = 2  # jupyter-lsp's language server spec schema (jupyter_lsp.schema, 2.x)


def spec(manager: object) -> dict[str, dict[str, object]]:
    """The spec: the server runs with the Jupyter server's own Python, where graphmend is installed."""
    return {
        "graphmend": {
            "version": SPEC_VERSION,
            "argv": [sys.executable, "-m", "graphmend.lsp", "--stdio"],
            "languages": ["python"],
            "mime_types": ["text/python", "text/x-ipython"],
            "display_name": "graphmend",
            "install": {"pip": "pip install graphmend"},
        }
    }
