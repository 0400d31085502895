"""Where a message kept in the graph behaves like the original, per torch release (issue 67).

    python -m venv /tmp/t214 && /tmp/t214/bin/pip install torch==2.14.1 transformers==4.49.0 numpy
    python benchmarks/message_contexts.py .venv/bin/python /tmp/t214/bin/python [--json OUT] [--only CONTEXT,...]

One program (`PROGRAM`: a block whose forward calls transformers' `logger.warning_once` and a standard
`logger.warning` with a tensor; the BART shape, a message after a fused pointwise kernel; a frame that
Dynamo runs eagerly; a deep block for DDP) runs in each context below, in two forms: `original`, as
written (the reference), and `fixed`, as `graphmend fix --unsafe-fixes` of this checkout writes it.

Each context runs in its own process of the interpreter measured (a `warning_once` writes once per
process), both forms in it. A cell is `same` where the form wrote the original's messages (text, in
order; a tensor's `grad_fn=` set aside), returned the same values and raised the same way; otherwise
what differs. Graph counts and breaks are shown, not compared: keeping the message in the graph is the
point of the fix. Runtime: about two minutes per interpreter on two CPU cores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FORMS = ("original", "fixed")
WIDTH = 8

PROGRAM = """import logging

import torch
from transformers.utils import logging as hf_logging

log = logging.getLogger(__name__)
hf_log = hf_logging.get_logger(__name__)


class Block(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.a = torch.nn.Linear(width, width)
        self.b = torch.nn.Linear(width, width)

    def forward(self, x):
        hf_log.warning_once("block: weights requested")
        h = self.a(x)
        log.warning("block: %s positive", (h > 0).sum())
        return self.b(h.relu())


class Pending(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.a = torch.nn.Linear(width, width)

    def forward(self, x):
        h = torch.nn.functional.layer_norm(x * 2 + 1, (8,))
        hf_log.warning_once("pending: falling back")
        return self.a(h)


class EagerFrame(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.a = torch.nn.Linear(width, width)

    def forward(self, x):
        try:
            h = self.a(x)
            torch._dynamo.graph_break()
            log.warning("eager: %s positive", (h > 0).sum())
            h = h.relu()
            log.warning("eager: %s nonzero", (h != 0).sum())
        finally:
            pass
        return h


class Deep(torch.nn.Module):
    def __init__(self, width: int = 512, depth: int = 4) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x).relu()
            if i == 1:
                log.warning("deep: %s positive", (x > 0).sum())
        return x
"""

# ---------------------------------------------------------------- the forms' texts (driver side)


def fixed_text(release: str) -> str:
    """PROGRAM as this checkout's graphmend fixes it for `release`."""
    python = ROOT / ".venv" / "bin" / "python"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from graphmend.api import Settings, fix_source\n"
        "path = Path(sys.argv[1])\n"
        "release = tuple(int(p) for p in sys.argv[2].split('.')[:2])\n"
        "sys.stdout.write(fix_source(path.read_text(), path, unsafe=True, settings=Settings(torch_version=release)).fixed)\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mc_program.py"
        path.write_text(PROGRAM, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
        interpreter = str(python) if python.exists() else sys.executable
        done = subprocess.run([interpreter, "-c", code, str(path), release], capture_output=True, text=True, env=env)
    if done.returncode != 0 or "_in_graph" not in done.stdout:
        raise RuntimeError(f"graphmend did not keep the messages in the graph: {done.stderr.strip()[-500:]}")
    return done.stdout


def form_texts(release: str) -> dict[str, str]:
    return {"original": PROGRAM, "fixed": fixed_text(release)}


# ---------------------------------------------------------------- worker side (the interpreter measured)


def _load(folder: Path, form: str) -> Any:
    """The form's module under a name of its own (its loggers, its operator names)."""
    import importlib

    sys.path.insert(0, str(folder))
    module = importlib.import_module(f"mc_{form.replace('-', '_')}")
    _capture(module.__name__)
    return module


_RECORDS: list[str] = []


def _capture(name: str) -> None:
    import logging

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            _RECORDS.append(record.getMessage())

    logger = logging.getLogger(name)
    logger.handlers[:] = [Keep()]
    logger.propagate = False
    logger.setLevel(logging.INFO)


def _fresh() -> None:
    import torch
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)


def _graphs() -> dict[str, int]:
    from torch._dynamo.utils import counters

    return {
        "graphs": counters["stats"]["unique_graphs"],
        "breaks": sum(counters["graph_break"].values()),
    }


def _input(*shape: int) -> Any:
    import torch

    return torch.linspace(-1.0, 1.0, math.prod(shape)).reshape(shape)


def _compiled(module: Any, backend: str, train: bool, cls: str = "Block") -> dict[str, Any]:
    import torch

    model = getattr(module, cls)()
    if not train:
        model.eval()
    run = torch.compile(model, backend=backend)
    values = []
    for _ in range(2):
        x = _input(4, WIDTH)
        if train:
            out = run(x)
            out.sum().backward()
            values.append(float(out.sum()))
        else:
            with torch.no_grad():
                values.append(float(run(x).sum()))
    if train:
        values.append(sum(float(p.grad.sum()) for p in model.parameters()))
    return {"values": values, "info": _graphs()}


def _eager(module: Any) -> dict[str, Any]:
    model = module.Block()
    return {"values": [float(model(_input(4, WIDTH)).sum()) for _ in range(2)]}


def _fake(module: Any) -> dict[str, Any]:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        model = module.Block()
        shapes = [tuple(model(_input(4, WIDTH)).shape) for _ in range(2)]
    return {"values": [list(s) for s in shapes]}


def _meta(module: Any) -> dict[str, Any]:
    import torch

    model = module.Block().to("meta")
    return {"values": [list(model(torch.empty(4, WIDTH, device="meta")).shape) for _ in range(2)]}


def _func_grad(module: Any) -> dict[str, Any]:
    import torch

    model = module.Block()
    grads = [torch.func.grad(lambda t: model(t).sum())(_input(4, WIDTH)) for _ in range(2)]
    return {"values": [float(g.sum()) for g in grads]}


def _func_vmap(module: Any) -> dict[str, Any]:
    import torch

    model = module.Block()
    return {"values": [float(torch.func.vmap(model)(_input(2, 4, WIDTH)).sum()) for _ in range(2)]}


def _symbolic_trace(module: Any, folder: Path) -> dict[str, Any]:
    import torch

    traced = torch.fx.symbolic_trace(module.Block())
    while_tracing = len(_RECORDS)
    values = [float(traced(_input(4, WIDTH)).sum()) for _ in range(2)]
    saved = folder / f"traced_{module.__name__}.pt"
    torch.save(traced, saved)
    load = (
        "import sys, torch\n"
        "m = torch.load(sys.argv[1], weights_only=False)\n"
        f"m(torch.ones(4, {WIDTH}))\n"
        "print('loaded and ran')\n"
    )
    fresh = subprocess.run([sys.executable, "-c", load, str(saved)], capture_output=True, text=True, timeout=120)
    reloaded = "ok" if fresh.returncode == 0 else _last_line(fresh.stderr)
    return {
        "values": values,
        "compare": {"messages while tracing": while_tracing, "fresh process loads and runs": reloaded},
    }


def _eager_frame(module: Any) -> dict[str, Any]:
    import torch
    from torch._dynamo.utils import counters

    holding: list[bool] = []

    def backend(graph: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        holding.append(any("in_graph_messages" in str(node.target) for node in graph.graph.nodes))
        return graph.forward

    model = module.EagerFrame()
    run = torch.compile(model, backend=backend)
    values = [float(run(_input(4, WIDTH)).sum()) for _ in range(2)]
    info = _graphs()
    info["of them holding the message operator"] = sum(holding)
    info["frames compiled"] = counters["frames"]["ok"]
    return {"values": values, "info": info}


def _cache(module: Any) -> dict[str, Any]:
    from torch._dynamo.utils import counters

    result = _compiled(module, "inductor", train=False)
    inductor = counters["inductor"]
    result["info"] = {
        **result["info"],
        "fxgraph hit": inductor["fxgraph_cache_hit"],
        "miss": inductor["fxgraph_cache_miss"],
        "bypass": inductor["fxgraph_cache_bypass"],
    }
    return result


def _names(module: Any, before: set[str]) -> dict[str, Any]:
    import torch

    names = sorted(set(torch._C._dispatch_get_all_op_names()) - before)
    return {"values": [n.split("::", 1)[1] for n in names if n.startswith("in_graph_messages::")]}


def _ddp_rank(rank: int, folder: str, forms: list[str], port: int, out: str) -> None:
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=2,
        timeout=datetime.timedelta(seconds=90),
    )
    results: dict[str, Any] = {}
    for form in forms:
        _fresh()
        _RECORDS.clear()
        try:
            module = _load(Path(folder), form)
            torch.manual_seed(0)
            model = DistributedDataParallel(module.Deep(), bucket_cap_mb=1)
            run = torch.compile(model, backend="aot_eager")
            values = []
            for _ in range(2):
                out_ = run(_input(8, 512) * (rank + 1))
                out_.sum().backward()
                values.append(round(float(out_.sum()), 2))
            results[form] = {"status": "ok", "values": values, "info": _graphs()}
        except Exception as error:  # noqa: BLE001 - every failure is a measurement
            results[form] = {"status": "raises", "error": _error(error)}
        results[form]["messages"] = list(_RECORDS)
    dist.destroy_process_group()
    if rank == 0:
        Path(out).write_text(json.dumps(results), encoding="utf-8")


def _ddp(folder: Path, forms: list[str]) -> dict[str, dict[str, Any]]:
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = folder / "ddp.json"
    mp.spawn(_ddp_rank, args=(str(folder), forms, port, str(out)), nprocs=2, join=True)
    return json.loads(out.read_text(encoding="utf-8"))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "failed"


def _error(error: BaseException) -> str:
    """The exception, its first lines, and the torch line that raised it."""
    import traceback

    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()][:2]
    where = ""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "site-packages" in f.filename]
    if frames:
        where = f" at {frames[-1].filename.split('site-packages/')[-1]}:{frames[-1].lineno}"
    return f"{type(error).__name__}: {' '.join(lines)[:220]}{where}"


CONTEXTS: dict[str, tuple[str, Callable[[Any], dict[str, Any]] | None]] = {
    "eager": ("no torch.compile", _eager),
    "compile-eager-train": ("compiled, backend eager, training", lambda m: _compiled(m, "eager", True)),
    "compile-aot-train": ("compiled, aot_eager, training", lambda m: _compiled(m, "aot_eager", True)),
    "compile-inductor-train": ("compiled, inductor, training", lambda m: _compiled(m, "inductor", True)),
    "inductor-eval": ("compiled, inductor, eval under no_grad", lambda m: _compiled(m, "inductor", False)),
    "pending-eval": (
        "inductor, eval under no_grad, message after a fused kernel (BART shape)",
        lambda m: _compiled(m, "inductor", False, "Pending"),
    ),
    "pending-train": (
        "inductor, training, message after a fused kernel",
        lambda m: _compiled(m, "inductor", True, "Pending"),
    ),
    "cache": ("inductor, second process, same TORCHINDUCTOR_CACHE_DIR", _cache),
    "ddp": ("torch.compile(DDP(model)), 2 ranks, gloo, aot_eager, bucket_cap_mb=1", None),
    "fake": ("FakeTensorMode (no compile)", _fake),
    "meta": ("meta device (no compile)", _meta),
    "func-grad": ("torch.func.grad", _func_grad),
    "func-vmap": ("torch.func.vmap", _func_vmap),
    "symbolic-trace": ("torch.fx.symbolic_trace, then torch.save and a fresh process", None),
    "eager-frame": ("a frame Dynamo runs eagerly (a break in a try block)", _eager_frame),
    "names": ("operator name, two processes (PYTHONHASHSEED 1 and 2)", None),
}


def worker(folder: Path, context: str, forms: list[str], out: Path) -> None:
    """One context, every form, in this process; the results as JSON in `out`."""
    import torch

    results: dict[str, Any] = {}
    if context == "ddp":
        results = _ddp(folder, forms)
    else:
        for form in forms:
            _fresh()
            _RECORDS.clear()
            before = set(torch._C._dispatch_get_all_op_names()) if context.startswith("names") else set()
            try:
                module = _load(folder, form)
                if context == "symbolic-trace":
                    result = _symbolic_trace(module, folder)
                elif context.startswith("names"):
                    result = _names(module, before)
                else:
                    run = CONTEXTS[context][1]
                    assert run is not None
                    result = run(module)
                result["status"] = "ok"
            except Exception as error:  # noqa: BLE001 - every failure is a measurement
                result = {"status": "raises", "error": _error(error), "info": _graphs()}
            result["messages"] = list(_RECORDS)
            results[form] = result
    results["_torch"] = torch.__version__
    out.write_text(json.dumps(results), encoding="utf-8")


# ---------------------------------------------------------------- driver


_GRAD_FN = re.compile(r", grad_fn=<\w+>")


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-4)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _info(result: dict[str, Any]) -> str:
    info = result.get("info") or {}
    return "; ".join(f"{k} {v}" for k, v in info.items())


def _describe(result: dict[str, Any]) -> str:
    if result["status"] != "ok":
        return f"raises ({result['error']})"
    parts = [f"{len(result['messages'])} messages"]
    parts += [f"{k}: {v}" for k, v in (result.get("compare") or {}).items()]
    if result.get("info"):
        parts.append(_info(result))
    return "; ".join(parts)


def cell(original: dict[str, Any] | None, result: dict[str, Any] | None, context: str) -> str:
    if result is None:
        return "n/a"
    if context == "names":
        first, second = result["values"]
        if not first:
            return "no operator"
        return f"same names {first}" if first == second else f"differs: {first} vs {second}"
    if original is None or result is original:
        return _describe(result)
    if result["status"] != "ok":
        if original["status"] != "ok" and original["error"].split(":")[0] == result["error"].split(":")[0]:
            return "same (raises too)"
        return f"raises ({result['error']})"
    if original["status"] != "ok":
        return f"differs (runs; the original raises); {_describe(result)}"
    what = []
    mine, theirs = result["messages"], original["messages"]
    if [_GRAD_FN.sub("", m) for m in mine] != [_GRAD_FN.sub("", m) for m in theirs]:
        what.append(f"messages {mine[:4]}, the original's {theirs[:4]}")
    if not _close(result.get("values"), original.get("values")):
        what.append(f"values {result.get('values')}, the original's {original.get('values')}")
    for key, value in (result.get("compare") or {}).items():
        if (original.get("compare") or {}).get(key) != value:
            what.append(f"{key}: {value}, the original's {(original.get('compare') or {}).get(key)}")
    note = _info(result)
    if not what:
        grad_fn = " (text without grad_fn)" if mine != theirs else ""
        return f"same{grad_fn}" + (f"; {note}" if note else "")
    return "differs (" + "; ".join(what) + ")" + (f"; {note}" if note else "")


def _run_worker(
    python: str, folder: Path, context: str, forms: list[str], env: dict[str, str], timeout: int
) -> dict[str, Any]:
    out = folder / f"{context}.json"
    out.unlink(missing_ok=True)
    command = [python, str(Path(__file__).resolve()), "--worker", context, "--folder", str(folder), "--out", str(out)]
    command += ["--forms", ",".join(forms)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {form: {"status": "raises", "error": f"timed out after {timeout} s", "messages": []} for form in forms}
    if done.returncode != 0 or not out.exists():
        error = _last_line(done.stderr)
        return {form: {"status": "raises", "error": f"worker failed: {error}", "messages": []} for form in forms}
    return json.loads(out.read_text(encoding="utf-8"))


def measure(python: str, only: list[str]) -> dict[str, Any]:
    release = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__.split('+')[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    texts = form_texts(release)
    forms = list(texts)
    rows: dict[str, Any] = {}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="message_contexts_") as tmp:
        folder = Path(tmp)
        for form, text in texts.items():
            (folder / f"mc_{form.replace('-', '_')}.py").write_text(text, encoding="utf-8")
        base = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1", "PYTHONPATH": ""}

        def run(context: str) -> None:
            started = time.monotonic()
            env = {**base, "TORCHINDUCTOR_CACHE_DIR": str(folder / f"inductor_{context}")}
            if context == "cache":
                _run_worker(python, folder, "cache", forms, env, 300)  # the first process fills the cache
                rows[context] = _run_worker(python, folder, "cache", forms, env, 300)
            elif context == "names":
                first = _run_worker(python, folder, "names", forms, {**env, "PYTHONHASHSEED": "1"}, 120)
                second = _run_worker(python, folder, "names", forms, {**env, "PYTHONHASHSEED": "2"}, 120)
                rows[context] = {
                    form: {
                        "status": "ok",
                        "messages": [],
                        "values": [first[form].get("values"), second[form].get("values")],
                    }
                    for form in forms
                }
            else:
                rows[context] = _run_worker(python, folder, context, forms, env, 300)
            timings[context] = round(time.monotonic() - started, 1)

        # Two workers at a time (a compile uses one core); the table keeps CONTEXTS' order.
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(run, [c for c in CONTEXTS if not only or c in only]))
    rows = {c: rows[c] for c in CONTEXTS if c in rows}
    return {"python": python, "torch": release, "forms": forms, "rows": rows, "seconds": timings}


def print_table(result: dict[str, Any]) -> None:
    forms = result["forms"]
    print(f"\n### torch {result['torch']} ({result['python']})\n")
    print("| context | " + " | ".join(forms) + " |")
    print("|---" * (len(forms) + 1) + "|")
    for context, row in result["rows"].items():
        original = row.get("original")
        cells = [cell(original, row.get(form), context) for form in forms]
        print(f"| {CONTEXTS[context][0]} | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    print(f"\nseconds per context: {result['seconds']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("python", nargs="*", help="interpreters to measure (default: this one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--only", default="", help="comma-separated contexts: " + ", ".join(CONTEXTS))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--forms", default=",".join(FORMS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.folder, args.worker, args.forms.split(","), args.out)
        return 0
    only = [c for c in args.only.split(",") if c]
    results = []
    for python in args.python or [sys.executable]:
        started = time.monotonic()
        result = measure(python, only)
        result["total_seconds"] = round(time.monotonic() - started, 1)
        print_table(result)
        print(f"total: {result['total_seconds']} s")
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
