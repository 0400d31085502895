"""What the benchmark scripts share: the fixed copy of transformers, worker processes, comparing outputs,
Dynamo's and inductor's logs, `graphmend check`'s spans and the timing lock.

A script run as `python benchmarks/X.py` has benchmarks/ first on sys.path, so it imports this as `harness`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import torch
import transformers

# Modules outside models/ whose functions the model files run in compiled code, fixed with them by every
# script that measures a fixed copy: the dynamic-RoPE growth runs `ROPE_INIT_FUNCTIONS[...]`, and its
# break there goes only with both.
SHARED_FILES = ("modeling_rope_utils.py",)
WRONG_PACKAGE = 3  # worker exit status: it imported another transformers than the variant's


# ---------------------------------------------------------------- the fixed copy


def fixed_copy(work: Path, families: Iterable[str], unsafe: bool = True) -> Path:
    """`work`/site, holding a copy of the installed transformers (made once: a kept folder reuses it) whose
    families' model files (`models/<family>/modeling_<family>.py`, `<family>` a folder under models/) and SHARED_FILES carry
    `graphmend fix --unsafe-fixes` (without `unsafe`, the safe fixes only); prints what the fix reports."""
    site = work / "site"
    if not (site / "transformers").exists():
        shutil.copytree(
            Path(transformers.__file__).parent, site / "transformers", ignore=shutil.ignore_patterns("__pycache__")
        )
    targets = [
        str(site / "transformers" / "models" / family / f"modeling_{Path(family).name}.py") for family in families
    ]
    targets += [str(site / "transformers" / file) for file in SHARED_FILES]
    fix = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", *(["--unsafe-fixes"] if unsafe else []), *targets],
        capture_output=True,
        text=True,
    )
    print(fix.stdout.strip())
    if fix.stderr.strip():
        print(fix.stderr.strip(), file=sys.stderr)
    return site


def graphmend_check(path: Path) -> list[dict[str, Any]]:
    """`graphmend check PATH --output-format json --no-cache`: every diagnostic, as JSON."""
    graphmend = Path(sys.executable).with_name("graphmend")
    result = subprocess.run(
        [str(graphmend), "check", str(path), "--output-format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(result.stdout)


# ---------------------------------------------------------------- worker processes


def exit_unless_imported_from(expected_package: Path) -> None:
    """A worker of a fixed copy must not run the installed package (or the other way round)."""
    imported = Path(transformers.__file__).resolve().parent
    if imported != expected_package.resolve():
        print(f"imported transformers from {imported}, expected {expected_package}", file=sys.stderr)
        sys.exit(WRONG_PACKAGE)


def worker_env(pythonpath: Path | None = None, **variables: str) -> dict[str, str]:
    """This process's environment plus `variables`, with `pythonpath` (the site folder of a fixed copy)
    first on PYTHONPATH, so that the worker imports that copy."""
    env = dict(os.environ, **variables)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return env


@contextlib.contextmanager
def empty_inductor_cache() -> Iterator[dict[str, str]]:
    """Environment variables giving a worker an inductor cache of its own, empty (and removed afterwards),
    so that its first call compiles everything."""
    with tempfile.TemporaryDirectory(prefix="inductor-cache-") as cache:
        yield {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_CACHE_DIR": cache}


def run_worker(script: str, arguments: list[str], env: dict[str, str], out: Path, timeout: float) -> dict[str, Any]:
    """Run `script --worker ARGUMENTS` in a fresh process (its stderr in `out`.log); the JSON record it wrote
    to `out`, or {"error": why}. A worker that imported the wrong transformers stops the whole run: its
    numbers would describe the other package."""
    log = Path(f"{out}.log")
    out.unlink(missing_ok=True)
    try:
        with log.open("w") as stderr:
            done = subprocess.run(
                [sys.executable, script, "--worker", *arguments],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                timeout=timeout,
            )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if done.returncode == WRONG_PACKAGE:
        raise SystemExit(f"{' '.join(arguments)}: {log.read_text().strip()}")
    if done.returncode != 0:
        return {"error": _exception(log.read_text(errors="replace")) or f"exit status {done.returncode}"}
    return json.loads(out.read_text())


def _exception(stderr: str) -> str:
    """The exception line of the last traceback in a worker's stderr, else its last line (at most 300 characters)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    starts = [index for index, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    after = lines[starts[-1] + 1 :] if starts else []
    return next((line for line in after if not line[0].isspace()), lines[-1] if lines else "")[:300]


# ---------------------------------------------------------------- comparing outputs


def identical(first: torch.Tensor, second: torch.Tensor) -> bool:
    """torch.equal, except that NaN equals NaN in the same place (fp16 LongT5 gives NaN on padded rows)."""
    nan = first.isnan()
    return torch.equal(nan, second.isnan()) and torch.equal(first[~nan], second[~nan])


def max_difference(first: torch.Tensor, second: torch.Tensor) -> float:
    """The largest |first - second| (NaN equal to NaN in the same place; inf when shapes or NaN places
    differ). On a GPU two processes of the same code need not agree bit for bit: inductor picks a
    reduction kernel's block sizes by timing it, so the order of a sum can change between runs."""
    if first.shape != second.shape or not torch.equal(first.isnan(), second.isnan()):
        return float("inf")
    nan = first.isnan()
    if not (~nan).any():
        return 0.0
    return (first[~nan].double() - second[~nan].double()).abs().max().item()


CUDA_FP32_TOLERANCE = 1e-4  # |Δ| ≤ tolerance × (1 + |original|): "equal" for fp32 outputs of two GPU processes


def close_on_gpu(first: torch.Tensor, second: torch.Tensor) -> bool:
    """Equal up to the reduction-order differences of two GPU processes (see max_difference)."""
    return first.shape == second.shape and torch.allclose(
        first.double(), second.double(), rtol=CUDA_FP32_TOLERANCE, atol=CUDA_FP32_TOLERANCE, equal_nan=True
    )


def same(
    first: list[torch.Tensor], second: list[torch.Tensor], agree: Callable[[torch.Tensor, torch.Tensor], bool]
) -> bool:
    """Whether two runs' outputs `agree` pair by pair (identical, close_on_gpu, ...); different counts never do."""
    return len(first) == len(second) and all(agree(a, b) for a, b in zip(first, second))


Gradients = dict[str, "torch.Tensor | None"]  # parameter name → its gradient after one backward


def parameter_gradients(model: torch.nn.Module, output: torch.Tensor) -> Gradients:
    """Every parameter's gradient after `output.sum().backward()` (None where none flows), the
    model's gradients cleared first, so a training forward is compared backward included."""
    parameters = dict(model.named_parameters())
    for parameter in parameters.values():
        parameter.grad = None
    output.float().sum().backward()
    return {name: None if p.grad is None else p.grad.detach().clone() for name, p in parameters.items()}


OPTIMISERS = {
    "SGD": lambda parameters: torch.optim.SGD(parameters, lr=0.1, momentum=0.9, weight_decay=0.01),
    "AdamW": lambda parameters: torch.optim.AdamW(parameters, lr=0.01, weight_decay=0.1),
}
STEPS = 3


def optimiser_steps(model: torch.nn.Module, losses: Callable[[], list[torch.Tensor]]) -> dict[str, Gradients]:
    """Every parameter after STEPS steps of SGD with momentum and of AdamW with weight decay, each
    from the model's weights as they are now (restored after), gradients set to None between steps
    (`zero_grad(set_to_none=True)`): a zero gradient where there was none moves a parameter under
    weight decay or momentum, which one backward's gradients do not show. `losses` runs the
    model's forwards of one step."""
    initial = {name: value.detach().clone() for name, value in model.state_dict().items()}
    trained: dict[str, Gradients] = {}
    for name, make in OPTIMISERS.items():
        model.load_state_dict(initial)
        optimiser = make([p for p in model.parameters() if p.requires_grad])
        for _ in range(STEPS):
            optimiser.zero_grad(set_to_none=True)
            for loss in losses():
                loss.float().sum().backward()
            optimiser.step()
        trained[name] = {key: value.detach().clone() for key, value in model.named_parameters()}
    model.load_state_dict(initial)
    return trained


def without_layerdrop(model: torch.nn.Module) -> None:
    """Layerdrop set to 0 everywhere, so training skips no layer: a fixed LayerDrop gate then runs
    each layer as the original does, and any parameter that differs after optimiser steps is a
    change the fixes make, not the gate's named zero-for-none gradient."""
    configs = [model.config, *(v for v in vars(model.config).values() if isinstance(v, transformers.PretrainedConfig))]
    for config in configs:
        for key, value in list(vars(config).items()):
            if "layerdrop" in key and isinstance(value, float):
                setattr(config, key, 0.0)
    for module in model.modules():
        for key, value in list(vars(module).items()):
            if "layerdrop" in key and isinstance(value, float):
                setattr(module, key, 0.0)


def parameters_difference(first: dict[str, Gradients], second: dict[str, Gradients]) -> str | None:
    """The first parameter that differs after the optimiser steps, in words (None: all agree)."""
    for optimiser, old in first.items():
        new = second.get(optimiser, {})
        for name, value in old.items():
            other = new.get(name)
            if value is None or other is None or not close(value, other):
                return f"after {STEPS} {optimiser} steps `{name}` differs"
    return None


def gradient_difference(first: list[Gradients], second: list[Gradients]) -> tuple[str | None, int]:
    """The first way two runs' gradients differ, in words (None when they agree: the same
    parameters, a gradient for each where the other has one, equal values, NaN only where the other
    has NaN), and how many parameter gradients are zero after where there was none before — what a
    fix that runs a skipped layer's parameters names in its title, kept apart."""
    if len(first) != len(second):
        return f"{len(first)} backward passes before, {len(second)} after", 0
    zero_for_none = 0
    for call, (old, new) in enumerate(zip(first, second)):
        if old.keys() != new.keys():
            return f"call {call}: the parameters differ", zero_for_none
        for name, a in old.items():
            b = new[name]
            if a is None and b is not None and bool((b == 0).all()):
                zero_for_none += 1
            elif (a is None) != (b is None):
                return f"call {call}: `{name}` has {'no' if a is None else 'a'} gradient before, " + (
                    "none after" if b is None else "a non-zero one after"
                ), zero_for_none
            elif a is not None and b is not None and not close(a, b):
                nan = bool(b.isnan().any() and not a.isnan().any())
                return f"call {call}: `{name}`'s gradient differs" + (
                    " (NaN after, none before)" if nan else ""
                ), zero_for_none
    return None, zero_for_none


def close(first: torch.Tensor, second: torch.Tensor) -> bool:
    """torch.allclose (atol 1e-6), NaN equal to NaN in the same place; tensors of different shapes never are."""
    return first.shape == second.shape and torch.allclose(first, second, atol=1e-6, equal_nan=True)


# ---------------------------------------------------------------- lines run


def trace_lines(
    name_of: Callable[[str], str | None], executed: dict[str, set[int]], frame: Any, event: str, arg: Any
) -> Any:
    """A `sys.settrace` function recording the lines run in the files `name_of` names (None: not traced)."""
    name = name_of(frame.f_code.co_filename)
    if name is None:
        return None
    lines = executed.setdefault(name, set())
    lines.add(frame.f_lineno)

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            lines.add(frame.f_lineno)
        return local

    return local


# ---------------------------------------------------------------- Dynamo's and inductor's logs


def _reason(message: str) -> str:
    """The first line of a graph-break message's reason that is not a lead-in ("... encountered:")."""
    if "Graph Break Reason:" not in message:
        return ""
    lines = (line.strip() for line in message.split("Graph Break Reason:", 1)[1].splitlines())
    return next((line for line in lines if line and not line.endswith(":")), "")


def collect_break_sites() -> dict[str, str]:
    """From now on, every Dynamo graph-break site of this process ("path:line", relative to the
    transformers package, else to site-packages) → its reason, filled in as the log reports them."""
    sites: dict[str, str] = {}

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            match = re.search(r"in user code at (\S+):(\d+)", message)
            if match:
                path = match.group(1)
                package = "/transformers/" if "/transformers/" in path else "site-packages/"
                sites.setdefault(f"{path.split(package)[-1]}:{match.group(2)}", _reason(message))

    torch._logging.set_logs(graph_breaks=True)
    breaks_logger = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
    breaks_logger.addHandler(Collect())
    breaks_logger.propagate = False
    return sites


SKIP_LOGGERS = ("torch._inductor.cudagraph_utils.__cudagraphs", "torch._inductor.cudagraph_utils.__perf_hints")


def collect_cudagraph_skips() -> list[str]:
    """The reasons inductor logs for each CUDA-graph skip in this process ("skipping cudagraphs due to
    ..."), in order; filled while the process runs (artifact loggers `cudagraphs`, `perf_hints`)."""
    reasons: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            skipped = "cudagraph" in message.lower() and ("skip" in message.lower() or "not compatible" in message)
            # graph partitioning (inductor config `graph_partition`) splits a graph around what it cannot record
            partitioned = "non-cudagraphable" in message and " 0 non-cudagraphable" not in message
            if skipped or partitioned:
                reasons.append(message.splitlines()[0][:300])

    torch._logging.set_logs(cudagraphs=True, perf_hints=True)
    for name in SKIP_LOGGERS:
        skip_logger = logging.getLogger(name)
        skip_logger.addHandler(Collect())
        skip_logger.propagate = False
    return reasons


# ---------------------------------------------------------------- graphmend's findings


Span = tuple[int, int, int, int]  # first line, last line, first column, end column (0-based, end exclusive)


def flagged_spans(files: list[Path], fixed_only: bool = False) -> dict[Path, list[Span]]:
    """Where every `graphmend check` diagnostic in each file is (`fixed_only`: those with a fix),
    and the line of each second break a diagnostic names (related information of kind "resume")."""
    check = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "--no-cache", "--output-format", "json", *map(str, files)],
        capture_output=True,
        text=True,
    )
    spans: dict[Path, list[Span]] = {file.resolve(): [] for file in files}
    for diagnostic in json.loads(check.stdout or "[]"):
        if fixed_only and not diagnostic.get("fix"):
            continue
        spans.setdefault(Path(diagnostic["path"]).resolve(), []).append(
            (diagnostic["line"], diagnostic["end_line"], diagnostic["column"] - 1, diagnostic["end_column"] - 1)
        )
        for related in diagnostic.get("related", []):
            if related.get("kind") == "resume":
                spans.setdefault(Path(related["path"]).resolve(), []).append(
                    (related["line"], related["line"], related["column"] - 1, 1 << 20)
                )
    return spans


def flagged_lines(files: list[Path], fixed_only: bool = False) -> dict[Path, list[tuple[int, int]]]:
    """The (first, last) line of each span of `flagged_spans`."""
    return {
        path: [(first, last) for first, last, _, _ in found] for path, found in flagged_spans(files, fixed_only).items()
    }


# ---------------------------------------------------------------- the timing lock


TIMING_LOCK = "GRAPHMEND_TIMING_LOCK"  # a file path: workers of parallel benchmark runs time one at a time


@contextlib.contextmanager
def timing_lock() -> Iterator[None]:
    """Hold the file lock named by $GRAPHMEND_TIMING_LOCK (if set) while timing.

    Two benchmark scripts may then compile at the same time on one GPU machine (compilation is CPU
    work) while their steady-state timings never overlap (kernels of two processes would share the GPU).
    """
    path = os.environ.get(TIMING_LOCK)
    if not path:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
