"""Measure where real TorchDynamo graph-breaks on the ground-truth corpus.

Each program in ``tests/dynamo_corpus`` defines ``ENTRY`` (a callable already wrapped by
``torch.compile`` in its own source) and ``INPUTS`` (a list of argument tuples that together
take every branch).  :func:`measure` runs ``ENTRY(*args)`` for every tuple and returns the
graph-break sites (lines of the corpus file) read from Dynamo's ``graph_breaks`` log, and the
number of compiled graphs from ``torch._dynamo.utils.counters["stats"]["unique_graphs"]``.

Run ``python tests/dynamo_harness.py [FILE ...]`` for a human-readable summary.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import logging
import os
import pathlib
import re
import sys
import types
import warnings
from dataclasses import dataclass

import torch
import torch._dynamo
import torch._dynamo.symbolic_convert  # noqa: F401  (creates the graph-break artifact logger)
import torch._dynamo.utils

from graphmend.verify import record_effects

CORPUS_DIR = pathlib.Path(__file__).resolve().parent / "dynamo_corpus"
GRAPH_BREAK_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"

_HEADER_RE = re.compile(
    r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?"
    r"in user code at (?P<file>.+):(?P<line>\d+)\s*$"
)
_REASON_RE = re.compile(r"^Graph Break Reason: ?(?P<reason>.*)$", re.MULTILINE)
_GB_ID_RE = re.compile(r"/gb/(?P<id>gb\d+)\.html")
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)

_module_counter = itertools.count()


@dataclass(frozen=True)
class Break:
    line: int  # 1-based line in the corpus file where the break is attributed
    reason_id: str  # e.g. "gb0170" (from the ".../gb/gbNNNN.html" link), "" if absent
    reason: str  # first line of the "Graph Break Reason: ..." text (generic wrapper lines skipped)


def load_program(path: pathlib.Path) -> types.ModuleType:
    """Import ``path`` as a fresh module under a unique name (re-executes it every call)."""
    path = pathlib.Path(path).resolve()
    name = f"_dynamo_corpus_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{next(_module_counter)}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    old_dont_write = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # unique module names: cached bytecode would only pile up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.dont_write_bytecode = old_dont_write
    return module


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


# Wrapper lines that Dynamo puts in front of the real reason when the break happened while
# tracing a call (nested function, method, builtin) or when the whole frame was skipped.
_WRAPPER_PREFIXES = (
    "Encountered graph break when attempting to trace",
    "Failed to handle graph break gracefully",
)


def _first_reason_line(message: str) -> str:
    """First line of the "Graph Break Reason:" text, skipping Dynamo's generic wrapper lines.

    ``Graph Break Reason: Encountered graph break when attempting to trace CALL: ...:`` is
    followed by the wrapped reason (e.g. ``Data-dependent branching``); that wrapped line is
    returned instead, so one site gives one reason whether or not it was reached through a call.
    """
    m = _REASON_RE.search(message)
    if m is None:
        return ""
    rest = message[m.start("reason") :].splitlines()
    i = 0
    while i < len(rest) and rest[i].strip().startswith(_WRAPPER_PREFIXES):
        j = i + 1
        while j < len(rest) and not rest[j].strip():
            j += 1
        if j >= len(rest):
            break
        i = j
    return rest[i].strip() if i < len(rest) else ""


def parse_record(message: str, corpus_file: str) -> Break | None:
    """Turn one graph-break log message into a :class:`Break` of ``corpus_file``.

    Returns None when the break cannot be attributed to a line of ``corpus_file``.
    """
    lines = message.splitlines()
    if not lines:
        return None
    header = _HEADER_RE.match(lines[0])
    if header is None:
        return None
    reason = _first_reason_line(message)
    gb_m = _GB_ID_RE.search(message)
    reason_id = gb_m.group("id") if gb_m else ""
    if _same_file(header.group("file"), corpus_file):
        return Break(int(header.group("line")), reason_id, reason)
    # The break happened outside the corpus file (e.g. inside logging/__init__.py):
    # attribute it to the deepest frame of the corpus file in the user stack.
    line = None
    for frame in _FRAME_RE.finditer(message):
        if _same_file(frame.group("file"), corpus_file):
            line = int(frame.group("line"))
    if line is None:
        return None
    return Break(line, reason_id, reason)


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # pragma: no cover - malformed record
            self.handleError(record)


def _all_stream_handlers() -> list[logging.StreamHandler]:
    loggers = [logging.getLogger()] + [
        lg for lg in list(logging.Logger.manager.loggerDict.values()) if isinstance(lg, logging.Logger)
    ]
    seen: dict[int, logging.StreamHandler] = {}
    for lg in loggers:
        for h in list(lg.handlers):
            if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler):
                seen.setdefault(id(h), h)
    return list(seen.values())


@contextlib.contextmanager
def _silenced():
    """Send prints, warnings and logging output of the program to buffers (yields them).

    Existing logging handlers writing to stdout/stderr are pointed at the buffers for the
    duration; handlers created meanwhile (e.g. by a first ``import transformers`` or by
    ``torch._logging.set_logs``) captured a redirected ``sys.stderr``, so they are pointed
    back at the real streams afterwards.
    """
    out, err = io.StringIO(), io.StringIO()
    real = {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) if s is not None}
    swapped: list[tuple[logging.StreamHandler, object]] = []
    for h in _all_stream_handlers():
        stream = getattr(h, "stream", None)
        if id(stream) in real:
            swapped.append((h, stream))
            h.stream = out if stream in (sys.stdout, sys.__stdout__) else err
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            # record=True keeps warnings away from outer capturers (e.g. pytest's summary);
            # they are written to the stderr buffer like everything else.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    yield out, err
                finally:
                    for w in caught:
                        err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
    finally:
        for h, stream in swapped:
            h.stream = stream
        for h in _all_stream_handlers():
            if h.stream is out:
                h.stream = sys.stdout
            elif h.stream is err:
                h.stream = sys.stderr


@contextlib.contextmanager
def capture_log(logger_name: str, artifact: str):
    """Collect the raw messages of one of torch's artifact logs (`graph_breaks`, `recompiles`),
    turned on for the duration and not propagated anywhere else."""
    logger = logging.getLogger(logger_name)
    handler = _ListHandler()
    old_propagate = logger.propagate
    torch._logging.set_logs(**{artifact: True})
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()
        logger.propagate = old_propagate


@contextlib.contextmanager
def _capture_graph_breaks():
    """Collect the raw messages of Dynamo's graph_breaks log."""
    checker = torch._dynamo.utils.graph_break_dup_warning_checker
    old_maxsize = checker.maxsize
    # A duplicate break is logged without its user stack; with maxsize 0 the checker forgets
    # every key at once, so each record keeps the stack we need for attribution.
    checker.maxsize = 0
    try:
        with capture_log(GRAPH_BREAK_LOGGER, "graph_breaks") as messages:
            yield messages
    finally:
        checker.maxsize = old_maxsize


# Which settings the config hides in a fresh process. `mock.patch.object(torch._dynamo.config,
# "ignore_logger_methods", ...)` deletes the setting on exit and sets it back, but torch leaves an
# alias hidden then ("does not exist" for every later program of the process).
_HIDDEN = {name: entry.hide for name, entry in getattr(torch._dynamo.config, "_config", {}).items()}


def _reset_dynamo() -> None:
    """Dynamo as a fresh process has it: no compiled code, no counters, no setting an earlier
    program's patch left hidden, and none of the message functions it registered (its
    `reorderable_logging_functions.add(print)` would silence every later program's prints)."""
    for name, entry in getattr(torch._dynamo.config, "_config", {}).items():
        entry.hide = _HIDDEN.get(name, entry.hide)
    for name in ("reorderable_logging_functions", "ignore_logging_functions", "ignore_logger_methods"):
        registered = getattr(torch._dynamo.config, name, None)  # not every release has each set
        if registered is not None:
            registered.clear()
    torch._dynamo.reset()
    torch._dynamo.utils.reset_graph_break_dup_checker()
    torch._dynamo.utils.counters.clear()


def measure(path: pathlib.Path) -> tuple[set[Break], int]:
    """Run a corpus program; return its graph-break sites and the number of compiled graphs."""
    path = pathlib.Path(path).resolve()
    corpus_file = str(path)
    _reset_dynamo()
    with _silenced():
        module = load_program(path)
        entry = module.ENTRY
        inputs = list(module.INPUTS)
        with _capture_graph_breaks() as messages:
            for args in inputs:
                entry(*args)
    graphs = int(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    breaks: set[Break] = set()
    for msg in messages:
        brk = parse_record(msg, corpus_file)
        if brk is not None:
            breaks.add(brk)
    _reset_dynamo()
    return breaks, graphs


PROJECTS_DIR = pathlib.Path(__file__).resolve().parent / "dynamo_projects"


@dataclass(frozen=True)
class ProjectBreak:
    file: str  # path relative to the project folder
    line: int
    reason_id: str


def _project_file(name: str, folder: pathlib.Path) -> str | None:
    try:
        return pathlib.Path(os.path.realpath(name)).relative_to(folder).as_posix()
    except ValueError:
        return None


def parse_project_record(message: str, folder: pathlib.Path) -> ProjectBreak | None:
    """One graph-break message as a break in a file of the project at `folder`: the file Dynamo
    names, or the deepest frame of the project in the user stack when it names another file."""
    lines = message.splitlines()
    header = _HEADER_RE.match(lines[0]) if lines else None
    if header is None:
        return None
    gb_m = _GB_ID_RE.search(message)
    reason_id = gb_m.group("id") if gb_m else ""
    file = _project_file(header.group("file"), folder)
    if file is not None:
        return ProjectBreak(file, int(header.group("line")), reason_id)
    found = None
    for frame in _FRAME_RE.finditer(message):
        file = _project_file(frame.group("file"), folder)
        if file is not None:
            found = ProjectBreak(file, int(frame.group("line")), reason_id)
    return found


def load_project(folder: pathlib.Path) -> types.ModuleType:
    """Import `<folder name>.main` afresh, with the project's parent folder on sys.path."""
    name = folder.name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    sys.path.insert(0, str(folder.parent))
    old_dont_write = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        return importlib.import_module(f"{name}.main")
    finally:
        sys.path.remove(str(folder.parent))
        sys.dont_write_bytecode = old_dont_write


def measure_project(folder: pathlib.Path) -> tuple[set[ProjectBreak], int]:
    """Run a multi-module program; return its break sites (file, line) and the compiled graphs."""
    breaks, graphs, _, _ = run_project(folder)
    return breaks, graphs


def run_project(folder: pathlib.Path) -> tuple[set[ProjectBreak], int, list[object], str]:
    """Run a multi-module program: its break sites, compiled graphs, the entry's results on each
    input, and everything it printed, logged and warned (in order)."""
    folder = pathlib.Path(os.path.realpath(folder))
    _reset_dynamo()
    outputs = []
    torch.manual_seed(0)  # the same weights for a program and its fixed copy
    with _silenced() as (out, err):
        module = load_project(folder)
        with _capture_graph_breaks() as messages:
            for args in module.INPUTS:
                outputs.append(module.ENTRY(*args))
    graphs = int(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    breaks = {b for b in (parse_project_record(m, folder) for m in messages) if b is not None}
    _reset_dynamo()
    return breaks, graphs, outputs, out.getvalue() + err.getvalue()


def project_folders() -> list[pathlib.Path]:
    return sorted(p for p in PROJECTS_DIR.iterdir() if (p / "main.py").is_file())


def expected_project_breaks(folder: pathlib.Path) -> set[tuple[str, int]]:
    """(file, line) of every `# dynamo: break` mark in the project's files."""
    return {
        (path.relative_to(folder).as_posix(), line)
        for path in folder.rglob("*.py")
        for line in expected_break_lines(path)
    }


EXPECT_MARK = re.compile(r"#\s*dynamo:\s*break\b")


def flagged(diagnostics) -> set[tuple[int, str]]:  # noqa: ANN001
    """The (line, code) pairs where graphmend says Dynamo breaks: each diagnostic's line, and the
    second break it names (a call resumed with its bound method loaded, related kind "resume")."""
    return {(d.range.start.line + 1, d.code) for d in diagnostics} | {
        (r.range.start.line + 1, d.code) for d in diagnostics for r in d.related if r.kind == "resume"
    }


def expected_break_lines(path: pathlib.Path) -> set[int]:
    """Lines of ``path`` carrying a trailing ``# dynamo: break`` comment."""
    text = pathlib.Path(path).read_text()
    return {i for i, line in enumerate(text.splitlines(), 1) if EXPECT_MARK.search(line)}


def corpus_files() -> list[pathlib.Path]:
    return sorted(CORPUS_DIR.glob("*.py"))


def main(argv: list[str]) -> int:
    import time

    files = [pathlib.Path(a) for a in argv] or corpus_files()
    start = time.perf_counter()
    mismatches = 0
    for f in files:
        t0 = time.perf_counter()
        breaks, graphs = measure(f)
        dt = time.perf_counter() - t0
        measured = {b.line for b in breaks}
        expected = expected_break_lines(f)
        ok = measured == expected and (not f.name.startswith("neg_") or (not breaks and graphs == 1))
        mismatches += not ok
        print(f"{'OK  ' if ok else 'FAIL'} {f.name}: graphs={graphs} breaks={len(measured)} ({dt:.2f}s)")
        for b in sorted(breaks, key=lambda b: (b.line, b.reason_id, b.reason)):
            print(f"       line {b.line:3d}  {b.reason_id or '-':7s} {b.reason}")
        if not ok:
            print(f"       expected lines {sorted(expected)}, measured {sorted(measured)}")
    print(f"{len(files)} files, {mismatches} mismatching, {time.perf_counter() - start:.1f}s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def run_observed(path: pathlib.Path) -> tuple[list, list[tuple[str, str]]]:
    """Run ENTRY on every input; return the outputs and the ordered side effects."""
    outputs, events, _ = run_observed_with_gradients(path, gradients=False)
    return outputs, events


def run_observed_with_gradients(path: pathlib.Path, gradients: bool = True) -> tuple[list, list[tuple[str, str]], list]:
    """Run ENTRY on every input, floating-point input tensors made leaves that require grad, then
    backward from the sum of every output that requires grad; return the outputs, the ordered side
    effects, and per input the gradients of its tensors (zero where none flowed, or where no output
    is differentiable) and of the module's parameters (None where none flowed: an optimiser skips
    such a parameter, and updates one whose gradient is zero). A training user sees these: a
    rewrite must keep them. Without `gradients`, the inputs are passed as they are."""
    _reset_dynamo()
    events: list[tuple[str, str]] = []
    outputs: list = []
    found: list = []
    torch.manual_seed(0)  # the same random weights for a program and its rewrite
    with _silenced():
        module = load_program(pathlib.Path(path))
    entry = module.ENTRY
    parameters = list(entry.parameters()) if isinstance(entry, torch.nn.Module) else []
    with record_effects(events):
        for args in module.INPUTS:
            leaves = [_leaf(a) for a in args] if gradients else list(args)
            for parameter in parameters:
                parameter.grad = None
            output = entry(*leaves)
            outputs.append(_detached(output))
            total = [t.sum() for t in _tensors(output) if t.requires_grad and t.is_floating_point()]
            if not gradients:
                continue
            if total:
                torch.stack(total).sum().backward()
            inputs = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
            # An input's missing gradient is a zero one; a parameter's is not (an optimiser skips it).
            found.append(
                [
                    *(_grad(t) if t.grad is not None else torch.zeros_like(t) for t in inputs),
                    *(_grad(t) for t in parameters),
                ]
            )
    _reset_dynamo()
    return outputs, events, found


def _leaf(value: object) -> object:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().clone().requires_grad_(True)
    return value


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _detached(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(item) for item in value)
    return value


def _grad(tensor: torch.Tensor) -> torch.Tensor | None:
    return tensor.grad.detach().clone() if tensor.grad is not None else None


def fullgraph_passes(path: pathlib.Path) -> bool:
    """Whether the compiled entry traces as one graph: torch.compile(..., fullgraph=True) runs."""
    _reset_dynamo()
    with _silenced():
        module = load_program(pathlib.Path(path))
        entry = module.ENTRY
        original = getattr(entry, "_orig_mod", None) or getattr(entry, "_torchdynamo_orig_callable", None) or entry
        compiled = torch.compile(original, backend="eager", fullgraph=True)
        try:
            for args in module.INPUTS:
                compiled(*args)
        except Exception:  # noqa: BLE001 - any failure means "not one graph"
            return False
        finally:
            _reset_dynamo()
    return True
