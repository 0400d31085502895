"""Whole-project analysis: which functions of a file run compiled because of code in other files.

Dynamo traces every function a compiled frame calls, in whatever module it is defined, so a
`print` in `utils.py` breaks the graph of a `forward` in `model.py`. The package, each part
building on the last, as `regions/` is for one file:

- `summary`: one file's `ModuleSummary` (cacheable by content), and `serialize` its JSON;
- `libraries`: where an installed package's module is on disk (never importing it);
- `names`: cross-module resolution (re-exports, bases in other files, library modules on demand);
- `reach`: every function compiled code reaches over all files, its callers, tensor parameters;
- `library_calls`: findings of files not reported themselves, reported at the user's call;
- `context`: each file's `ProjectContext`; `joined`: `Project`, the three over one set of summaries,
  with the called findings it computes with the checker its build gives it.
"""

from .context import context_key
from .joined import Project
from .serialize import summary_from_json, summary_to_json
from .summary import ModuleSummary, graph_of, summarize, summarize_module

__all__ = [
    "ModuleSummary",
    "Project",
    "context_key",
    "graph_of",
    "summarize",
    "summarize_module",
    "summary_from_json",
    "summary_to_json",
]
