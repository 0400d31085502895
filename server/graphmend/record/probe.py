"""What a proof run shows, observed inside each of the command's Python processes.

Started by the recorder's boot when GRAPHMEND_PROVE_PLAN names a plan. It seeds the run, then
writes `observed-<process>.jsonl` beside the recorder's events: the text written to stdout and
stderr, each log record and warning, the outputs of every call of what `torch.compile` returned,
the gradients before and the parameters and buffers after each optimizer step, the graphs and
compiles per compiled function, uncaught exceptions, and (in the original run) which of the lines
the fixes rewrite ran. Both runs are observed the same way; `compare` reads the two.

It imports no torch: it acts on torch, and NumPy, when the command imports them. A failure here is
kept to itself: the user's run matters more than one observation.
"""

from __future__ import annotations

import array
import atexit
import functools
import importlib.machinery
import json
import logging
import os
import random
import sys
import threading
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from .finders import DelegatingFinder
from .values import Digester

SEED = 0
EXACT_BACKENDS = frozenset({"eager", "aot_eager"})  # their outputs are bitwise what eager gives
MAX_VALUES = 1 << 24  # float64 values a process keeps for a compare within tolerance (128 MB)
MAX_TEXT = 8 << 20  # characters of a stream's text kept
# Loggers of torch's compiler: what they say is about the compile (a graph break, a recompile), which
# a fix is meant to change, not about the program. Kept apart, with the text their handlers write.
COMPILE_LOGGERS = ("torch._", "torch.fx")


def process_name() -> str:
    rank = os.environ.get("RANK")
    return f"rank{rank}-{os.getpid()}" if rank else str(os.getpid())


class Observations:
    """This process's observation file (a forked child starts one of its own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._pid = -1
        self._out: IO[str] | None = None
        self._values: IO[bytes] | None = None
        self.values_kept = 0
        self.text: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.text_size = 0
        self.compile_text: list[str] = []  # what torch's compile loggers wrote to stdout and stderr
        self.compiling = threading.local()  # `active` while a compile logger's handlers run
        self.lock = threading.RLock()
        self.closed = False
        self.failed = False  # an observation could not be written: the process is not fully observed
        self.truncated = False  # its text went past MAX_TEXT
        os.register_at_fork(before=self.before_fork, after_in_child=self.in_child)

    def write(self, item: dict[str, Any]) -> None:
        """Write one observation (nothing once closed: a daemon thread's late log must not raise)."""
        try:
            with self.lock:
                if self.closed and self._pid == os.getpid():
                    return
                if self._pid != os.getpid():
                    self._start()
                assert self._out is not None
                self._out.write(json.dumps(item, default=str) + "\n")
        except Exception:  # noqa: BLE001  (the user's program matters more than one observation)
            self.failed = True

    def before_fork(self) -> None:
        """Empty the buffer, so that the child's copy of the file object writes nothing twice."""
        if self._out is not None and self._pid == os.getpid():
            self._out.flush()

    def in_child(self) -> None:
        """A forked child: a lock of its own (another thread may have held the parent's), and the
        parent's file object left alone (its own file starts at its first observation)."""
        self.lock = threading.RLock()
        self._out = None
        self._values = None
        self.closed = False

    def room_for(self, count: int) -> bool:
        return self.values_kept + count <= MAX_VALUES

    def keep_values(self, values: array.array) -> tuple[str, int] | None:
        """Keep float64 values for a compare within tolerance: (file, offset), None past the cap."""
        with self.lock:
            if self.values_kept + len(values) > MAX_VALUES:
                return None
            if self._pid != os.getpid():
                self._start()
            if self._values is None:
                self._values = open(self.folder / f"values-{process_name()}.bin", "wb")  # noqa: SIM115
            offset = self._values.tell()
            values.tofile(self._values)
            self.values_kept += len(values)
            return self._values.name.rsplit(os.sep, 1)[-1], offset

    def _start(self) -> None:
        self._pid = os.getpid()
        self._out = open(self.folder / f"observed-{process_name()}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        self._values = None
        self.values_kept = 0
        self.text = {"stdout": [], "stderr": []}
        self.text_size = 0
        self.compile_text = []
        self._out.write(
            json.dumps({"process": {"argv": sys.argv, "rank": os.environ.get("RANK"), "executable": sys.executable}})
            + "\n"
        )

    def close(self) -> None:
        with self.lock:
            if self._pid != os.getpid():
                self._start()
            assert self._out is not None
            for stream, chunks in self.text.items():
                self._out.write(json.dumps({"text": stream, "data": "".join(chunks)}) + "\n")
            if self.truncated or self.failed:
                problem = "its text went past 8 M characters, or an observation could not be written"
                self._out.write(json.dumps({"probe_error": problem}) + "\n")
            self._out.write(json.dumps({"compile_text": self.compile_text}) + "\n")
            self._out.write(json.dumps({"end": True}) + "\n")
            self._out.close()
            self.closed = True
            if self._values is not None:
                self._values.close()


class _Tee:
    """A text stream that keeps what is written to it."""

    def __init__(self, stream: Any, name: str, observed: Observations) -> None:
        self._stream = stream
        self._name = name
        self._observed = observed

    def write(self, text: str) -> int:
        observed = self._observed
        if getattr(observed.compiling, "active", False):
            observed.compile_text.append(text)
        elif isinstance(text, str) and observed.text_size < MAX_TEXT:
            observed.text[self._name].append(text)
            observed.text_size += len(text)
        elif isinstance(text, str):
            observed.truncated = True
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Probe:
    """The observers of one process."""

    def __init__(self, folder: Path, plan: dict[str, Any], loaded: set[str]) -> None:
        self.observed = Observations(folder)
        self.loaded = loaded  # the rewritten files served so far
        self.values = Digester(self.observed.keep_values, self.observed.room_for)
        self.calls: dict[str, int] = {}
        self.steps = 0
        self.names: dict[int, str] = {}  # id(parameter or buffer) → its name in a compiled module
        self.modules: list[Any] = []  # the compiled modules, for their buffers
        self.graphs: dict[str, int] = {}  # compile id → graphs
        self.functions: dict[str, dict[str, int]] = {}  # "path:line name" → graphs, compiles, recompiles
        self.seeded_by_command: dict[str, str] = {}  # library → where the command seeded it
        self.lines_wanted: dict[str, set[int]] = {path: set(lines) for path, lines in plan.get("lines", {}).items()}
        self.lines_hit: set[tuple[str, int]] = set()

    # ------------------------------------------------------------------ start and end
    def start(self) -> None:
        random.seed(SEED)
        self._watch_seed(random, "seed", "random")
        sys.meta_path.insert(0, _AfterImport({"torch": self._on_torch, "numpy": self._on_numpy}, self._failed))
        if sys.stdout is not None:  # (None: no stream, print() does nothing, and so it stays)
            sys.stdout = _Tee(sys.stdout, "stdout", self.observed)
        if sys.stderr is not None:
            sys.stderr = _Tee(sys.stderr, "stderr", self.observed)
        self._watch_logging()
        self._watch_warnings()
        self._watch_exceptions()
        if self.lines_wanted:
            self._trace_lines()
        atexit.register(self.finish)

    def finish(self) -> None:
        try:
            sys.settrace(None)
            self.observed.write({"seeds": self.seeded_by_command, "exact": self.values.exact, "steps": self.steps})
            self.observed.write({"functions": self.functions, "served": sorted(self.loaded)})
            if self.lines_wanted:
                self.observed.write({"lines": sorted(self.lines_hit)})
            self.observed.close()
        except Exception:  # noqa: BLE001
            pass

    def _failed(self, module: str, error: Exception) -> None:
        """A part of the observer did not start: the run is not fully observed, and `compare` says so."""
        self.observed.write({"probe_error": f"watching {module}: {type(error).__name__}: {error}"})

    # ------------------------------------------------------------------ seeds
    def _watch_seed(self, owner: Any, name: str, library: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def seeding(*args: Any, **kwargs: Any) -> Any:
            self.seeded_by_command.setdefault(library, _caller())
            return original(*args, **kwargs)

        setattr(owner, name, seeding)

    def _on_numpy(self, numpy: types.ModuleType) -> None:
        numpy.random.seed(SEED)
        self._watch_seed(numpy.random, "seed", "numpy")

    def _on_torch(self, torch: types.ModuleType) -> None:
        torch.manual_seed(SEED)
        self._watch_seed(torch, "manual_seed", "torch")
        torch.random.manual_seed = torch.manual_seed
        self._watch_compile(torch)
        optimizers = sys.modules["torch.optim.optimizer"]  # (torch imports it with itself)
        optimizers.register_optimizer_step_pre_hook(self._before_step)
        optimizers.register_optimizer_step_post_hook(self._after_step)
        trace = logging.getLogger("torch.__trace")
        trace.setLevel(logging.DEBUG)
        trace.propagate = False
        trace.addHandler(_GraphCounter(self))

    # ------------------------------------------------------------------ text, logs, warnings, exceptions
    def _watch_logging(self) -> None:
        original = logging.Logger.callHandlers
        observed = self.observed

        def call_handlers(logger: logging.Logger, record: logging.LogRecord) -> None:
            if logger.name.startswith(COMPILE_LOGGERS):  # (the trace and artifact logs are the recorder's)
                observed.compiling.active = True
                try:
                    original(logger, record)
                finally:
                    observed.compiling.active = False
                return
            if ".__" not in logger.name:
                try:
                    message = record.getMessage()
                except Exception:  # noqa: BLE001
                    message = str(record.msg)
                observed.write(
                    {
                        "log": logger.name,
                        "level": record.levelname,
                        "message": message,
                        "path": record.pathname,
                        "line": record.lineno,
                    }
                )
            original(logger, record)

        logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign,assignment]

    def _watch_warnings(self) -> None:
        original = warnings.showwarning
        observed = self.observed

        @functools.wraps(original)
        def showwarning(message: Any, category: type[Warning], filename: str, lineno: int, *args: Any) -> None:
            observed.write({"warning": category.__name__, "message": str(message), "path": filename, "line": lineno})
            original(message, category, filename, lineno, *args)

        warnings.showwarning = showwarning  # type: ignore[assignment]

    def _watch_exceptions(self) -> None:
        original = sys.excepthook
        observed = self.observed

        def excepthook(kind: type[BaseException], value: BaseException, traceback: Any) -> None:
            observed.write({"exception": kind.__name__, "message": str(value)})
            original(kind, value, traceback)

        sys.excepthook = excepthook
        original_thread = threading.excepthook

        def thread_excepthook(args: Any) -> None:
            observed.write({"exception": args.exc_type.__name__, "message": str(args.exc_value), "thread": True})
            original_thread(args)

        threading.excepthook = thread_excepthook

    # ------------------------------------------------------------------ lines
    def _trace_lines(self) -> None:
        """Trace lines only in the functions that hold a fixed line (a code object is judged once)."""
        wanted = {**self.lines_wanted, **{os.path.realpath(p): lines for p, lines in self.lines_wanted.items()}}
        hit = self.lines_hit
        holds: dict[types.CodeType, bool] = {}

        def in_function(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                lines = wanted.get(frame.f_code.co_filename)
                if lines is not None and frame.f_lineno in lines:
                    hit.add((os.path.realpath(frame.f_code.co_filename), frame.f_lineno))
            return in_function

        def on_call(frame: types.FrameType, event: str, arg: Any) -> Any:
            code = frame.f_code
            held = holds.get(code)
            if held is None:
                lines = wanted.get(code.co_filename)
                held = holds[code] = lines is not None and any(line in lines for _, _, line in code.co_lines())
            return in_function if held else None

        sys.settrace(on_call)
        threading.settrace(on_call)

    # ------------------------------------------------------------------ compiled calls
    def _watch_compile(self, torch: types.ModuleType) -> None:
        original = torch.compile
        probe = self

        @functools.wraps(original)
        def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:
            backend = kwargs.get("backend", "inductor")
            if not (isinstance(backend, str) and backend in EXACT_BACKENDS):
                probe.values.exact = False
            compiled = original(model, *args, **kwargs)
            if model is None:  # `@torch.compile(...)`: the decorator
                return lambda fn: probe._watched(compiled(fn), fn, torch)
            return probe._watched(compiled, model, torch)

        torch.compile = compile  # type: ignore[attr-defined]

    def _watched(self, compiled: Any, model: Any, torch: types.ModuleType) -> Any:
        name = _name_of(model)
        if isinstance(compiled, torch.nn.Module):
            original_module = getattr(compiled, "_orig_mod", model)
            self._remember_module(original_module)
            compiled.forward = self._calls(compiled.forward, name, torch)
            return compiled
        owner = getattr(model, "__self__", None)
        if isinstance(owner, torch.nn.Module):  # `module.compile()` compiles its `_call_impl`
            self._remember_module(owner)
        if callable(compiled) and not getattr(compiled, "_graphmend_observed", False):
            # (torch's decorator form compiles through `torch.compile` again: observed once)
            observed = functools.wraps(compiled)(self._calls(compiled, name, torch))
            observed._graphmend_observed = True  # type: ignore[attr-defined]
            return observed
        return compiled

    def _remember_module(self, module: Any) -> None:
        self.modules.append(module)
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            self.names.setdefault(id(tensor), name)

    def _calls(self, function: Callable[..., Any], name: dict[str, Any], torch: types.ModuleType) -> Callable[..., Any]:
        probe = self
        key = json.dumps(name)

        def observed_call(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            try:
                number = probe.calls[key] = probe.calls.get(key, 0) + 1
                inputs = {id(v) for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)}
                probe.observed.write({**name, "n": number, "out": probe.values.digest(result, torch, inputs)})
            except Exception as error:  # noqa: BLE001
                probe.observed.write({**name, "n": -1, "error": repr(error)})
            return result

        return observed_call

    # ------------------------------------------------------------------ optimizer steps
    def _named(self, optimizer: Any) -> list[tuple[str, Any]]:
        named = []
        for g, group in enumerate(optimizer.param_groups):
            for i, parameter in enumerate(group["params"]):
                named.append((self.names.get(id(parameter), f"param_groups[{g}][{i}]"), parameter))
        return named

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        torch = sys.modules["torch"]
        try:
            grads = {name: self.values.digest(p.grad, torch) for name, p in self._named(optimizer)}
            self.observed.write({"step": self.steps + 1, "optimizer": type(optimizer).__name__, "grads": grads})
        except Exception as error:  # noqa: BLE001
            self.observed.write({"step": self.steps + 1, "error": repr(error)})

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        torch = sys.modules["torch"]
        self.steps += 1
        try:
            named = self._named(optimizer)
            params = {name: self.values.digest(p, torch) for name, p in named}
            ids = {id(p) for _, p in named}
            buffers = {}
            for module in self.modules:
                if any(id(p) in ids for p in module.parameters()):
                    buffers.update({n: self.values.digest(b, torch) for n, b in module.named_buffers()})
            self.observed.write({"after_step": self.steps, "params": params, "buffers": buffers})
        except Exception as error:  # noqa: BLE001
            self.observed.write({"after_step": self.steps, "error": repr(error)})


class _GraphCounter(logging.Handler):
    """Counts graphs and compiles per compiled function from torch's structured trace."""

    def __init__(self, probe: Probe) -> None:
        super().__init__(logging.DEBUG)
        self.probe = probe

    def emit(self, record: logging.LogRecord) -> None:
        try:
            metadata = getattr(record, "metadata", None)
            if not isinstance(metadata, dict):
                return
            compile_id = f"{metadata.get('frame_id')}/{metadata.get('frame_compile_id')}"
            if "dynamo_output_graph" in metadata:
                self.probe.graphs[compile_id] = self.probe.graphs.get(compile_id, 0) + 1
            metrics = metadata.get("compilation_metrics")
            if isinstance(metrics, dict):
                function = f"{metrics.get('co_filename')}:{metrics.get('co_firstlineno')} {metrics.get('co_name')}"
                counts = self.probe.functions.setdefault(function, {"graphs": 0, "compiles": 0, "recompiles": 0})
                counts["compiles"] += 1
                counts["graphs"] += self.probe.graphs.pop(compile_id, 0)
                if metadata.get("frame_compile_id"):
                    counts["recompiles"] += 1
        except Exception:  # noqa: BLE001
            pass


class _AfterImport(DelegatingFinder):
    """Calls an action with a module once it is imported (each once); `failed` with what it raised."""

    def __init__(
        self, actions: dict[str, Callable[[types.ModuleType], None]], failed: Callable[[str, Exception], None]
    ) -> None:
        super().__init__()
        self.actions = actions
        self.failed = failed

    def wants(self, fullname: str) -> bool:
        return fullname in self.actions

    def adjust(self, fullname: str, spec: importlib.machinery.ModuleSpec) -> None:
        """Run the action after the module's own code. It is taken only then: a lookup alone
        (transformers' `find_spec("torch")`) must not use it up."""
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return

        def exec_then_act(module: types.ModuleType) -> None:
            exec_module(module)
            action = self.actions.pop(fullname, None)
            if action is None:
                return
            try:
                action(module)
            except Exception as error:  # noqa: BLE001  (said in the observations: nothing is proved)
                self.failed(fullname, error)

        loader.exec_module = exec_then_act  # type: ignore[union-attr,method-assign]


def _name_of(model: Any) -> dict[str, Any]:
    """A compiled callable's name and where it is defined (`compare` reads a rewritten file's line
    through the rewrite's line map): its function, or the module's class."""
    target = getattr(model, "__func__", model)
    code = getattr(target, "__code__", None)
    owner = getattr(model, "__self__", None)
    if code is not None and not (code.co_name == "_call_impl" and owner is not None):
        return {
            "call": getattr(target, "__qualname__", code.co_name),
            "path": code.co_filename,
            "line": code.co_firstlineno,
        }
    kind = type(owner if owner is not None else model)
    code = getattr(getattr(kind, "forward", None), "__code__", None)
    return {
        "call": kind.__qualname__,
        "path": code.co_filename if code is not None else kind.__module__,
        "line": code.co_firstlineno if code is not None else None,
    }


def _caller() -> str:
    """The first frame outside this file and the seeding library: where the command seeded."""
    frame = sys._getframe(2)
    while frame is not None and ("site-packages" in frame.f_code.co_filename or frame.f_code.co_filename == __file__):
        frame = frame.f_back  # type: ignore[assignment]
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


def start(folder: Path, plan_file: Path, loaded: set[str]) -> Probe:
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    probe = Probe(folder, plan, loaded)
    probe.start()
    return probe
