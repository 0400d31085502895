"""The recorder inside the user's process: a handler on torch's trace logger.

Torch writes its structured-trace records as soon as the logger `torch.__trace` has a handler
(`torch/_logging/_internal.py`), so adding one is all it takes: no patch of torch, no trace file.
`set_logs` and torch's own setup remove only torch's handlers, so this one stays. Nothing here
imports torch: the handler can be in place before the user's code imports it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .log import EventLog
from .runs import new_run, process_file, project_root

TRACE_LOGGER = "torch.__trace"


def _torch_version() -> str | None:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", None) or "") or None


class TraceHandler(logging.Handler):
    """Hands each trace record to an `EventLog`; never lets a failure of its own reach the run."""

    def __init__(self, log: EventLog) -> None:
        super().__init__(logging.DEBUG)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict):
            return
        try:
            self.log.record(metadata, getattr(record, "payload", None))
        except Exception:  # noqa: BLE001  (the user's run matters more than one lost event)
            pass


def install(path: Path) -> TraceHandler:
    """Record this process's compile events into the JSONL file at `path` until `uninstall`."""
    handler = TraceHandler(EventLog(path, _torch_version))
    logger = logging.getLogger(TRACE_LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    return handler


def uninstall(handler: TraceHandler) -> None:
    logging.getLogger(TRACE_LOGGER).removeHandler(handler)
    handler.log.close()


@contextmanager
def recording(out: Path | None = None) -> Iterator[Path]:
    """Record what torch.compile meets inside the block (a notebook, a test) as a run of its own
    under the project root's `.graphmend/runs/` (or in the folder `out`); yields the run's folder,
    which `read_run` reads once the block has ended."""
    run = Path(out) if out is not None else new_run(project_root(Path.cwd()))
    run.mkdir(parents=True, exist_ok=True)
    handler = install(process_file(run))
    try:
        yield run
    finally:
        uninstall(handler)
