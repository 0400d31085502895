"""graphmend: find TorchDynamo graph breaks in PyTorch source before it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from pathlib import Path

__version__ = "0.1.0"


def recording(out: Path | None = None) -> AbstractContextManager[Path]:
    """`with graphmend.recording():` records what torch.compile meets inside the block (a notebook, a
    test) as a run under the project's `.graphmend/runs/`; see `graphmend.record.handler.recording`."""
    from .record.handler import recording as record_block

    return record_block(out)


def __getattr__(name: str) -> object:
    """`graphmend.api` after a plain `import graphmend` (as docs/record.md shows it), imported only
    when asked for: a recorder in the user's process never loads the analyses."""
    if name == "api":
        import importlib

        return importlib.import_module(".api", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
