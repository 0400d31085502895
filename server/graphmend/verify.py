"""`graphmend verify`: run a file and its rewritten twin under real Dynamo and compare them.

This is the only part of graphmend that executes user code (it imports the file). It needs
torch (`pip install 'graphmend[verify]'`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import logging
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import Settings, fix_source, read_source

_BREAK_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"
_SITE = re.compile(r"in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.MULTILINE)
_load_counter = itertools.count()


class VerifyError(Exception):
    """A problem with the request (no torch, no such entry, bad inputs): exit 2 with this message."""


@dataclass
class Run:
    graphs: int = 0
    sites: list[str] = field(default_factory=list)
    fullgraph: bool = False
    fullgraph_error: str = ""
    outputs: list[Any] = field(default_factory=list)
    effects: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Report:
    before: Run
    after: Run
    outputs_equal: bool
    effects_equal: bool
    fixes_applied: int

    @property
    def ok(self) -> bool:
        return self.outputs_equal and self.effects_equal and len(self.after.sites) <= len(self.before.sites)

    def table(self) -> str:
        def sites(run: Run) -> str:
            return ", ".join(run.sites) or "—"

        def passed(run: Run) -> str:
            return "pass" if run.fullgraph else "fail"

        rows = [
            ("", "before", "after"),
            ("graphs", str(self.before.graphs), str(self.after.graphs)),
            ("graph-break sites", sites(self.before), sites(self.after)),
            ("fullgraph=True", passed(self.before), passed(self.after)),
            ("outputs equal", "", "yes" if self.outputs_equal else "NO"),
            ("stdout/logs/warnings equal", "", "yes" if self.effects_equal else "NO"),
        ]
        width = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join(f"{r[0]:<{width[0]}}  {r[1]:<{width[1]}}  {r[2]}" for r in rows)


def _torch() -> Any:
    try:
        import torch
        import torch._dynamo
        import torch._dynamo.testing
    except ImportError:
        raise VerifyError("`graphmend verify` needs torch: pip install 'graphmend[verify]' (torch==2.13.0)") from None
    return torch


def verify(path: Path, entry: str, inputs: list[str], settings: Settings, unsafe: bool = False) -> Report:
    torch = _torch()
    fixed = fix_source(read_source(path), path, settings, unsafe)
    if fixed.error:
        raise VerifyError(fixed.error)
    torch.manual_seed(0)
    namespace = {"torch": torch}
    try:
        arguments = [_as_tuple(eval(expression, namespace)) for expression in inputs]  # noqa: S307 - the user's own input
    except Exception as error:  # noqa: BLE001
        raise VerifyError(f"cannot evaluate --inputs: {type(error).__name__}: {error}") from None
    with tempfile.TemporaryDirectory(prefix="graphmend-verify-") as folder:
        twin = Path(folder) / path.name
        twin.write_text(fixed.fixed, encoding="utf-8")
        before = _run(torch, path, entry, arguments)
        after = _run(torch, twin, entry, arguments)
    after.sites = [s.replace(str(twin), str(path)) for s in after.sites]
    return Report(
        before,
        after,
        outputs_equal=_same(torch, before.outputs, after.outputs),
        effects_equal=before.effects == after.effects,
        fixes_applied=fixed.applied,
    )


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


def _clone(torch: Any, value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(torch, v) for v in value)
    return value


def _same(torch: Any, a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.allclose(a, b, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(torch, x, y) for x, y in zip(a, b))
    if hasattr(a, "to_tuple") and hasattr(b, "to_tuple"):  # Hugging Face ModelOutput
        return _same(torch, a.to_tuple(), b.to_tuple())
    return bool(a == b)


def _load(path: Path) -> Any:
    name = f"_graphmend_verify_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{next(_load_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise VerifyError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _entry(torch: Any, module: Any, entry: str) -> Any:
    target: Any = module
    for part in entry.split("."):
        if not hasattr(target, part):
            raise VerifyError(f"{entry!r} is not defined in the file")
        target = getattr(target, part)
    if isinstance(target, type) and issubclass(target, torch.nn.Module):
        target = target()
    for attribute in ("_orig_mod", "_torchdynamo_orig_callable"):  # undo torch.compile in the source
        target = getattr(target, attribute, target)
    if isinstance(target, torch.nn.Module):
        target.eval()
    return target


def _run(torch: Any, path: Path, entry: str, arguments: list[tuple[Any, ...]]) -> Run:
    run = Run()
    torch._dynamo.reset()
    torch.manual_seed(0)  # the same initial weights for the file and its twin
    with record_effects([]):  # importing the file is not what is compared
        function = _entry(torch, _load(path), entry)
    with record_effects(run.effects):
        counter = torch._dynamo.testing.CompileCounter()
        compiled = torch.compile(function, backend=counter)
        with _graph_breaks() as records:
            for args in arguments:
                run.outputs.append(compiled(*_clone(torch, args)))
    run.graphs = counter.frame_count
    sites = []
    for record in records:
        match = _SITE.search(record)
        if match and Path(match.group("file")).name == path.name:
            sites.append(f"{path.name}:{match.group('line')}")
    run.sites = sorted(set(sites), key=lambda s: int(s.rsplit(":", 1)[1]))
    torch._dynamo.reset()
    full = torch.compile(function, backend="eager", fullgraph=True)
    with record_effects([]):
        try:
            for args in arguments:
                full(*_clone(torch, args))
            run.fullgraph = True
        except Exception as error:  # noqa: BLE001 - any failure means "not one graph"
            run.fullgraph_error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    torch._dynamo.reset()
    return run


@contextlib.contextmanager
def _graph_breaks() -> Iterator[list[str]]:
    import torch

    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger(_BREAK_LOGGER)
    handler = Collect()
    torch._logging.set_logs(graph_breaks=True)
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
        torch._logging.set_logs()


class _Stdout(io.StringIO):
    def __init__(self, effects: list[tuple[str, str]]) -> None:
        super().__init__()
        self.effects = effects

    def write(self, text: str) -> int:
        if text:
            if self.effects and self.effects[-1][0] == "stdout":
                self.effects[-1] = ("stdout", self.effects[-1][1] + text)
            else:
                self.effects.append(("stdout", text))
        return len(text)


@contextlib.contextmanager
def record_effects(effects: list[tuple[str, str]]) -> Iterator[None]:
    """Record the program's prints, log records and warnings, in order, without showing them."""
    original = logging.Logger.handle

    def handle(self: logging.Logger, record: logging.LogRecord) -> None:
        if record.name.startswith("torch"):  # torch's own logs (graph breaks among them) go on as usual
            original(self, record)
        else:
            effects.append(("log", f"{record.levelname}:{record.getMessage()}"))

    torch_folder = str(Path(sys.modules["torch"].__file__ or "").parent)

    def show(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        if not filename.startswith(torch_folder):  # torch's own deprecation notices are not the program's
            effects.append(("warning", f"{category.__name__}:{message}"))

    logging.Logger.handle = handle  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stdout(_Stdout(effects)), contextlib.redirect_stderr(io.StringIO()):
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.showwarning = show
                yield
    finally:
        logging.Logger.handle = original  # type: ignore[method-assign]
