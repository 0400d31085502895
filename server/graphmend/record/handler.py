"""The recorder inside the user's process: a handler on torch's trace logger.

Torch writes its structured-trace records as soon as the logger `torch.__trace` has a handler
(`torch/_logging/_internal.py`), so adding one is all it takes: no patch of torch, no trace file.
`set_logs` and torch's own setup remove only torch's handlers, so this one stays. Nothing here
imports torch: the handler can be in place before the user's code imports it.

The same handler listens to the `graph_breaks` and `recompiles` text logs, for a release that lacks
a structured record (`EventLog.text` uses a message only then). Dynamo writes them only when they
are on, which costs a log record per break or recompile: the recorder turns on the ones the user
did not, sent to itself alone (so the user's output is unchanged), and puts them back as they were
when it stops. With the graph_breaks log on, Dynamo also writes the structured record of a frame it
skips (`convert_frame` checks that log before writing either).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .log import NO_COMPILE, EventLog
from .runs import finish_run, new_run, process_file, project_root

TRACE_LOGGER = "torch.__trace"
TEXT_LOGGERS = {  # torch 2.9 to 2.14: the artifact loggers Dynamo writes each text log to
    "torch._dynamo.symbolic_convert.__graph_breaks": "graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks": "graph_breaks",
    "torch._dynamo.exc.__graph_breaks": "graph_breaks",
    "torch._dynamo.guards.__recompiles": "recompiles",
}
# inductor warns of a CUDA-graph skip met while the graph runs (a mutated input, found by
# cudagraph trees at its first replay), outside any compile's metrics; warnings are on by default,
# so the recorder only listens, leaving the logger's level and the user's output as they are
WARNING_LOGGERS = {"torch._inductor.cudagraph_utils.__cudagraphs": "cudagraphs"}


def _torch_version() -> str | None:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", None) or "") or None


def _compile_id() -> str:
    """The compile a text-log message belongs to, as the structured records name it."""
    guards = sys.modules.get("torch._guards")
    compile_id = guards.CompileContext.current_compile_id() if guards is not None else None
    if compile_id is None:
        return NO_COMPILE
    return f"{getattr(compile_id, 'frame_id', None)}/{getattr(compile_id, 'frame_compile_id', None)}"


class TraceHandler(logging.Handler):
    """Hands each trace record and text-log message to an `EventLog`; never lets a failure of its
    own reach the run."""

    def __init__(self, log: EventLog) -> None:
        super().__init__(logging.DEBUG)
        self.log = log
        self.changed: dict[str, tuple[int, bool]] = {}  # a text logger this turned on → as it was
        self.recompiles_on = False  # whether this turned on torch's `recompiles` log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            metadata = getattr(record, "metadata", None)
            if isinstance(metadata, dict):
                if "dynamo_start" in metadata:  # each compile: the text logs on, also after a set_logs()
                    self.listen()
                self.log.record(metadata, getattr(record, "payload", None))
            elif record.name in TEXT_LOGGERS:
                message = record.getMessage()
                if record.exc_info:  # a skipped frame's reason is in its exception
                    message += "\n" + logging.Formatter().formatException(record.exc_info)
                self.log.text(TEXT_LOGGERS[record.name], message, _compile_id())
            elif record.name in WARNING_LOGGERS and record.levelno >= logging.WARNING:
                self.log.text(WARNING_LOGGERS[record.name], record.getMessage(), _compile_id())
        except Exception:  # noqa: BLE001  (the user's run matters more than one lost event)
            pass

    def listen(self) -> None:
        """Turn on the text logs the user has not, written to this handler alone. Dynamo writes
        `recompiles` only when torch's log state names it (set by TORCH_LOGS or `set_logs`)."""
        internal = sys.modules.get("torch._logging._internal")
        state = getattr(internal, "log_state", None)
        if state is not None and not state.is_artifact_enabled("recompiles"):
            state.enable_artifact("recompiles")
            self.recompiles_on = True
        for name in TEXT_LOGGERS:
            logger = logging.getLogger(name)
            if self not in logger.handlers:
                logger.addHandler(self)
            if not logger.isEnabledFor(logging.DEBUG):
                self.changed.setdefault(name, (logger.level, logger.propagate))
                logger.setLevel(logging.DEBUG)
                logger.propagate = False
        for name in WARNING_LOGGERS:
            if self not in logging.getLogger(name).handlers:
                logging.getLogger(name).addHandler(self)

    def restore(self) -> None:
        """The text logs as they were before `listen`."""
        for name in (*TEXT_LOGGERS, *WARNING_LOGGERS):
            logging.getLogger(name).removeHandler(self)
        for name, (level, propagate) in self.changed.items():
            logger = logging.getLogger(name)
            if logger.level == logging.DEBUG and not logger.propagate:  # unless torch or the user set it since
                logger.setLevel(level)
                logger.propagate = propagate
        internal = sys.modules.get("torch._logging._internal")
        if self.recompiles_on and internal is not None:
            internal.log_state.artifact_names.discard("recompiles")


def install(path: Path) -> TraceHandler:
    """Record this process's compile events into the JSONL file at `path` until `uninstall`."""
    handler = TraceHandler(EventLog(path, _torch_version))
    logger = logging.getLogger(TRACE_LOGGER)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    handler.listen()
    return handler


def uninstall(handler: TraceHandler) -> None:
    logging.getLogger(TRACE_LOGGER).removeHandler(handler)
    handler.restore()
    handler.log.close()


@contextmanager
def recording(out: Path | None = None) -> Iterator[Path]:
    """Record what torch.compile meets inside the block (a notebook, a test) as a run of its own
    under the project root's `.graphmend/runs/` (or in the folder `out`); yields the run's folder,
    which `read_run` reads once the block has ended."""
    run = Path(out) if out is not None else new_run(project_root(Path.cwd()))
    run.mkdir(parents=True, exist_ok=True)
    handler = install(process_file(run))
    started, code = time.time(), 1
    try:
        yield run
        code = 0
    finally:
        uninstall(handler)
        finish_run(run, ["recording()", *sys.argv], started, code)  # 1: the block raised
