"""Run a program's compiled entry where its code may run, and name what a rewrite changes there
(issue 50, the context matrix).

`where_users_run` runs the program as its author compiled it. The code itself may also run inlined
(as a submodule of a compiled parent or an `nn.Sequential`, through a subclass's
`super().forward()`, under `checkpoint` in a compiled step), under another grad mode
(`no_grad`, `inference_mode`) or precision (fp16 and bf16 autocast), exported (strict and not),
with hooks on its submodules, and over other batch sizes or sequence lengths. A safe fix must
change nothing in any of them; each difference an unsafe fix makes must be named by one of its
hazards (`NAMED_BY`). A context that cannot apply to a program (a plain function has no
`super()`, an entry of several inputs does not fit an `nn.Sequential`) is reported as such.

A program may give `SHAPES`, inputs of other sizes (a sequence length its loop runs over); without
it the batch dimension of every input is doubled and tripled.

Issue 67 adds where else it runs. Under DistributedDataParallel (2 gloo ranks in processes of their
own, compiled with aot_eager, buckets so small that the DDPOptimizer cuts a graph at each
parameter); compiled with inductor in training and in eval under `no_grad`; a second fresh process
compiling with inductor against the caches a first one filled (`warm_cache`); under a
`FakeTensorMode` and on the meta device, uncompiled and compiled (shapes and dtypes only); under
`torch.func.grad` and `torch.func.vmap`; traced by `torch.fx.symbolic_trace` and the traced module
run, and loaded with `torch.load` in a fresh process (`fx_load`); compiled under a filter that makes
every warning an error; and trained with AdamW one input a step. The contexts that start processes
or compile C++ (`EXPENSIVE`) cost seconds a program; the others a fraction of one.

Run `python tests/where_code_runs.py FILE [FIXED]` to see one program's observations (and the
differences from its rewrite).
"""

from __future__ import annotations

import contextlib
import datetime
import faulthandler
import gc
import inspect
import itertools
import os
import pathlib
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import dynamo_harness
import torch
import torch._dynamo.utils
import torch._inductor.config
import where_users_run

from graphmend.verify import record_effects

CONTEXTS = (
    "plain",
    "submodule",
    "sequential",
    "super",
    "checkpoint",
    "no_grad",
    "inference_mode",
    "autocast_fp16",
    "autocast_bf16",
    "export_strict",
    "export",
    "hooks",
    "shapes",
    "fake",
    "meta",
    "func_grad",
    "vmap",
    "fx",
    "warnings_error",
    "adamw",
    "inductor_train",
    "inductor_eval",
    "ddp",
    "warm_cache",
    "fx_load",
)
# The contexts that compile C++ or start processes: seconds a program (CI runs them on a sample).
EXPENSIVE = ("inductor_train", "inductor_eval", "ddp", "warm_cache", "fx_load")
CHEAP = tuple(context for context in CONTEXTS if context not in EXPENSIVE)
# A context's differences are named by a hazard holding one of these words.
NAMED_BY = {
    "plain": (),  # the program as compiled: `where_users_run` holds each difference to its hazard
    "submodule": ("inlin", "submodule", "compiled code calls", "gradient", "hook"),
    "sequential": ("inlin", "sequential", "compiled code calls", "gradient", "hook"),
    "super": ("inlin", "super()", "compiled code calls", "gradient"),
    "checkpoint": ("inlin", "checkpoint", "compiled code calls", "gradient"),
    "no_grad": ("no_grad", "grad mode", "requires grad"),
    "inference_mode": ("inference",),
    "autocast_fp16": ("autocast", "float16", "half", "dtype"),
    "autocast_bf16": ("autocast", "bfloat16", "dtype"),
    "export_strict": ("export",),
    "export": ("export",),
    "hooks": ("hook",),
    "shapes": ("recompile", "graph", "shape"),
    "fake": ("fake", "meta"),
    "meta": ("fake", "meta"),
    # gradients (the outputs of `torch.func.grad`): what a hazard about gradients, grad mode or an
    # operation graphmend does not know names
    "func_grad": (
        "torch.func",
        "vmap",
        "functorch",
        "gradient",
        "requires grad",
        "does not know",
        "caller's own",
        "held elsewhere",
    ),
    "vmap": ("torch.func", "vmap", "functorch"),
    "fx": ("symbolic_trace", "torch.fx"),
    # its two passes over the same inputs show an in-place change of the caller's tensor twice
    "warnings_error": ("warn", "caller's own", "held elsewhere"),
    "adamw": ("zero gradient", "weight decay", "optimi", "gradient", "requires grad", "does not know"),
    "inductor_train": ("inductor",),
    "inductor_eval": ("inductor",),
    "ddp": ("ddp", "distributed"),
    "warm_cache": ("cache",),
    "fx_load": ("symbolic_trace", "torch.fx"),
}
NOT_APPLICABLE = "not applicable"
# Contexts where what the break could not trace cannot run either (fake and meta tensors have no
# values to branch on, vmap and symbolic_trace cannot branch on a tensor, export cannot graph-break):
# a program that raised there and runs after its rewrite is what removing the break is for.
_RUNS_WHERE_THE_BREAK_STOPPED = ("export_strict", "export", "fake", "meta", "vmap", "fx", "fx_load")
# DistributedDataParallel: 2 ranks; buckets of this many MiB (about 10 bytes: a bucket a parameter).
RANKS = 2
BUCKET_MB = 1e-5
# A worker process (a DDP rank, a fresh process) is ended after this many seconds.
PROCESS_TIMEOUT_S = 120


class _Parent(torch.nn.Module):
    """A compiled parent that calls the program's code: Dynamo inlines it."""

    def __init__(self, child: Callable[..., Any], through: Callable[..., Any] | None = None) -> None:
        super().__init__()
        self.child = child if isinstance(child, torch.nn.Module) else where_users_run._Calling(child)
        self.through = through

    def forward(self, *args: object) -> object:
        if self.through is not None:
            return self.through(self.child, *args)
        return self.child(*args)


def _checkpointed(child: Callable[..., Any], *args: object) -> object:
    return torch.utils.checkpoint.checkpoint(child, *args, use_reentrant=False)


def _subclassed(module: torch.nn.Module) -> torch.nn.Module:
    """The module as an instance of a subclass whose `forward` calls `super().forward()`, its state
    the module's own (no constructor run again)."""
    base = type(module)

    class Subclass(base):  # type: ignore[valid-type, misc]
        def forward(self, *args: object, **kwargs: object) -> object:
            return super().forward(*args, **kwargs)

    instance = Subclass.__new__(Subclass)
    instance.__dict__.update(module.__dict__)
    return instance


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def _run(
    calling: Callable[..., Any],
    inputs: list[tuple[object, ...]],
    around: Callable[[], contextlib.AbstractContextManager[Any]] = _nothing,
    gradients: bool = True,
    parameters: list[torch.Tensor] | None = None,
) -> dict[str, object]:
    """Outputs, messages, gradients (of the inputs and `parameters`), graphs and recompiles of
    `calling` on every input; the error instead where it raises."""
    events: list[tuple[str, str]] = []
    outputs: list[object] = []
    gradient_values: list[object] = []
    with dynamo_harness.capture_log(where_users_run.RECOMPILES_LOGGER, "recompiles") as recompiles:
        try:
            # record_effects inside: `_silenced` would take the prints and warnings it records
            with dynamo_harness._silenced(), record_effects(events):
                for args in inputs:
                    leaves = [dynamo_harness._leaf(a) for a in args] if gradients else list(args)
                    for parameter in parameters or []:
                        parameter.grad = None
                    with around():
                        output = calling(*leaves)
                    outputs.append(dynamo_harness._detached(output))
                    losses = [t.sum() for t in dynamo_harness._tensors(output) if t.requires_grad]
                    if gradients and losses:
                        torch.stack([loss.float() for loss in losses]).sum().backward()
                        tensors = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
                        gradient_values.append([dynamo_harness._grad(t) for t in [*tensors, *(parameters or [])]])
        except Exception as error:  # noqa: BLE001 - an error is an observation
            return {"error": where_users_run._error(error), "events": events}
    return {
        "outputs": outputs,
        "events": events,
        "gradients": gradient_values,
        "graphs": int(torch._dynamo.utils.counters["stats"]["unique_graphs"]),
        "recompiles": len(recompiles),
    }


def _batched(inputs: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Each input with the first dimension of its tensors doubled, then tripled."""
    grown = []
    for factor in (2, 3):
        for args in inputs:
            grown.append(
                tuple(torch.cat([a] * factor) if isinstance(a, torch.Tensor) and a.dim() > 0 else a for a in args)
            )
    return grown


def _shapes(value: object) -> object:
    """A value with each tensor as its shape and dtype (fake and meta tensors have no values)."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (tuple, list)):
        return [_shapes(item) for item in value]
    if isinstance(value, dict):
        return {key: _shapes(item) for key, item in value.items()}
    return value if value is None or isinstance(value, (bool, int, float, str)) else type(value).__name__


def _observed(
    body: Callable[[list[object], list[tuple[str, str]]], None],
    inside: Callable[[], contextlib.AbstractContextManager[Any]] = _nothing,
) -> dict[str, object]:
    """`body(outputs, events)` run with the program's messages recorded: its outputs and messages,
    or the error it raised and the messages before it."""
    outputs: list[object] = []
    events: list[tuple[str, str]] = []
    try:
        with dynamo_harness._silenced(), record_effects(events), inside():
            body(outputs, events)
    except Exception as error:  # noqa: BLE001 - an error is an observation
        return {"error": where_users_run._error(error), "events": events}
    return {"outputs": outputs, "events": events}


def _uncompiled(entry: Callable[..., Any]) -> Callable[..., Any]:
    """The entry without its own compile: a module whose `forward` is compiled (`@torch.compile` on
    the method) runs the method's own code (the contexts that run the code uncompiled, or compile it
    with a backend of their own)."""
    if not isinstance(entry, torch.nn.Module):
        return entry
    original = getattr(entry.forward, "_torchdynamo_orig_callable", None)
    if original is None:
        return entry
    if "forward" in entry.__dict__:  # `module.forward = torch.compile(module.forward)`
        entry.forward = original if inspect.ismethod(original) else types.MethodType(original, entry)
    else:  # the class's method: symbolic_trace reads `type(module).forward`
        base = type(entry)
        entry.__class__ = type(base.__name__, (base,), {"forward": original, "__module__": base.__module__})
    return entry


def _eager() -> contextlib.AbstractContextManager[Any]:
    """Every compiled function of the program run as plain Python (`force_eager`)."""
    return torch.compiler.set_stance("force_eager")


@contextlib.contextmanager
def _no_kernels() -> Iterator[None]:
    """Inductor lowered to eager: its kernels would read the memory of fake and meta tensors, which
    have none (a segfault: a program whose helper compiles with inductor, compiled again here)."""
    import torch._inductor.compile_fx

    kept = torch._inductor.compile_fx.compile_fx
    torch._inductor.compile_fx.compile_fx = lambda graph, example_inputs, **kwargs: graph.forward
    try:
        yield
    finally:
        torch._inductor.compile_fx.compile_fx = kept


def _without_values(entry: Callable[..., Any], inputs: list[tuple[object, ...]], context: str) -> dict[str, object]:
    """The entry on fake tensors (a `FakeTensorMode`, the module's real parameters let in) or on the
    meta device (module and inputs moved there), uncompiled (`force_eager`) and compiled: output
    shapes and dtypes, messages, errors."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    entry = _uncompiled(entry)
    mode = FakeTensorMode(allow_non_fake_inputs=True) if context == "fake" else None
    if mode is not None:
        converted = [tuple(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args) for args in inputs]
    else:
        if isinstance(entry, torch.nn.Module):
            entry.to("meta")
        converted = [tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args) for args in inputs]
    parts: dict[str, object] = {}
    for part in ("eager", "compiled"):
        target = entry if part == "eager" else torch.compile(entry, backend="eager")

        def body(outputs: list[object], events: list[tuple[str, str]], target: Callable[..., Any] = target) -> None:
            for args in converted:
                outputs.append(_shapes(target(*args)))

        @contextlib.contextmanager
        def inside(part: str = part) -> Iterator[None]:
            with _no_kernels(), mode or contextlib.nullcontext(), _eager() if part == "eager" else _nothing():
                yield

        parts[part] = _observed(body, inside)
    return {"parts": parts}


def _first_floating(args: tuple[object, ...]) -> int | None:
    return next(
        (i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()),
        None,
    )


def _scalar(output: object) -> torch.Tensor:
    """The sum of every floating-point tensor of an output (what a loss of it would be)."""
    return torch.stack([t.sum().float() for t in dynamo_harness._tensors(output) if t.is_floating_point()]).sum()


def _func_grad(entry: Callable[..., Any], inputs: list[tuple[object, ...]]) -> dict[str, object] | str:
    """`torch.func.grad_and_value` of the sum of the entry's floating outputs, with respect to its
    first floating input and (a module) its parameters through `functional_call`; uncompiled."""
    entry = _uncompiled(entry)
    is_module = isinstance(entry, torch.nn.Module)
    parameters = {name: p.detach() for name, p in entry.named_parameters()} if is_module else {}
    if not parameters and _first_floating(inputs[0]) is None:
        return NOT_APPLICABLE

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for args in inputs:
            position = _first_floating(args)

            def scalar(
                x: torch.Tensor | None,
                weights: dict[str, torch.Tensor],
                args: tuple = args,
                position: int | None = position,
            ) -> torch.Tensor:
                called = list(args)
                if position is not None:
                    called[position] = x
                if is_module:
                    return _scalar(torch.func.functional_call(entry, weights, tuple(called)))
                return _scalar(entry(*called))

            argnums = tuple(n for n, wanted in ((0, position is not None), (1, bool(parameters))) if wanted)
            x = args[position] if position is not None else None
            gradients, value = torch.func.grad_and_value(scalar, argnums=argnums)(x, parameters)
            outputs.append((value.detach(), gradients))

    return _observed(body, _eager)


def _vmap(entry: Callable[..., Any], inputs: list[tuple[object, ...]]) -> dict[str, object] | str:
    """`torch.func.vmap` of the entry over a batch of two copies of each input's tensors; uncompiled."""
    entry = _uncompiled(entry)
    if not any(isinstance(a, torch.Tensor) for a in inputs[0]):
        return NOT_APPLICABLE

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for args in inputs:
            batched = tuple(torch.stack([a, a]) if isinstance(a, torch.Tensor) else a for a in args)
            dims = tuple(0 if isinstance(a, torch.Tensor) else None for a in args)
            mapped = torch.func.vmap(entry, in_dims=dims, randomness="different")
            outputs.append(dynamo_harness._detached(mapped(*batched)))

    return _observed(body, _eager)


def _traced(entry: Callable[..., Any], args: tuple[object, ...]) -> torch.fx.GraphModule:
    """`torch.fx.symbolic_trace` of the entry for one input: its Python values (flags, sizes) as
    concrete arguments, as the branch they choose is not a tensor's."""
    concrete: dict[str, object] = {}
    try:
        signature = inspect.signature(entry.forward if isinstance(entry, torch.nn.Module) else entry)
        bound = signature.bind(*args).arguments
        kinds = {name: parameter.kind for name, parameter in signature.parameters.items()}
        concrete = {
            name: value
            for name, value in bound.items()
            if not isinstance(value, torch.Tensor) and kinds[name] is inspect.Parameter.POSITIONAL_OR_KEYWORD
        }
    except (TypeError, ValueError):  # no signature to bind: every argument traced
        pass
    return torch.fx.symbolic_trace(entry, concrete_args=concrete or None)


def _fx(entry: Callable[..., Any], inputs: list[tuple[object, ...]]) -> dict[str, object]:
    """Each input: the entry traced by `symbolic_trace`, then the traced module called on it (the
    messages of tracing, a mark, those of the call)."""
    entry = _uncompiled(entry)

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for args in inputs:
            traced = _traced(entry, args)
            events.append(("fx", "traced"))
            outputs.append(dynamo_harness._detached(traced(*args)))

    return _observed(body)


def _warnings_error(entry: Callable[..., Any], inputs: list[tuple[object, ...]]) -> dict[str, object]:
    """The compiled entry under `warnings.simplefilter("error")`, every warning an error (the
    program's, torch's operators' such as `F.softmax` without `dim`, a message kept in a graph).
    A first pass over the inputs compiles every graph with warnings shown, a second runs them under
    the filter: while it traces, Dynamo probes tensors in ways that warn (`.grad` of a non-leaf),
    noise that depends on where the graphs are cut, not on what the program does, and that would
    stop the original's compile and not its rewrite's. Per input: its outputs, or the warning it
    raised; then the module's state. An error that is no warning is the program's own, seen as in
    every context (`raises`)."""
    compiled = torch.compile(_uncompiled(entry), backend="eager")
    warm = _observed(lambda outputs, events: [compiled(*args) for args in inputs])

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for args in inputs:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    output = compiled(*args)
                except Warning as warning:  # the warning, raised; any other error is the program's own
                    outputs.append(("raised", _stable(where_users_run._error(warning))))
                else:
                    outputs.append(dynamo_harness._detached(output))

    seen = _observed(body)
    seen["events"] = [*warm["events"], ("warnings", "as errors"), *seen["events"]]  # type: ignore[misc]
    if "error" in warm and "error" not in seen:
        seen["warm-up"] = _stable(warm["error"])
    if isinstance(entry, torch.nn.Module):
        seen["state"] = [t.detach().clone() for t in entry.state_dict().values()]
    return seen


def _adamw(path: pathlib.Path) -> dict[str, object] | str:
    """A fresh module compiled and trained by AdamW (weight decay 0.1), one input a step, in order
    and round again, STEPS steps at least: the parameters after each step, and which parameters had
    no gradient, a zero one or another (AdamW skips a parameter with none; a zero one still moves
    under weight decay and the moments); up to the step that leaves a parameter not finite (an
    input holding inf), after which both train on nothing worth comparing."""
    program = where_users_run._fresh(path)
    entry = _uncompiled(where_users_run._original(program.ENTRY))
    parameters = list(entry.parameters()) if isinstance(entry, torch.nn.Module) else []
    if not parameters:
        return NOT_APPLICABLE
    inputs = [tuple(args) for args in program.INPUTS]
    compiled = torch.compile(entry, backend="eager")
    optimiser = torch.optim.AdamW(parameters, lr=0.01, weight_decay=0.1)
    after: list[list[torch.Tensor]] = []
    gradients: list[tuple[str, ...]] = []

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for step in range(max(where_users_run.STEPS, len(inputs))):
            optimiser.zero_grad(set_to_none=True)
            losses = [loss.float() for loss in where_users_run._losses(compiled(*inputs[step % len(inputs)]))]
            if losses:
                torch.stack(losses).sum().backward()
            gradients.append(
                tuple("none" if p.grad is None else "zero" if not p.grad.any() else "some" for p in parameters)
            )
            optimiser.step()
            after.append([p.detach().clone() for p in parameters])
            if not all(p.isfinite().all() for p in parameters):
                return  # a model whose parameters are no longer finite trains on nothing worth comparing

    seen = _observed(body)
    seen.pop("outputs", None)
    seen["parameters"] = after
    seen["none_gradients"] = gradients
    return seen


def _inductor(entry: Callable[..., Any], inputs: list[tuple[object, ...]], training: bool) -> dict[str, object]:
    """Compiled with inductor, random ops drawing as eager does (`fallback_random`): in training with
    backward, or in eval (a module's `eval()`) under `no_grad`."""
    entry = _uncompiled(entry)
    parameters = list(entry.parameters()) if isinstance(entry, torch.nn.Module) else []
    if not training and isinstance(entry, torch.nn.Module):
        entry.eval()
    with torch._inductor.config.patch(fallback_random=True):
        compiled = torch.compile(entry, backend="inductor")
        if training:
            return _run(compiled, inputs, parameters=parameters)
        return _run(compiled, inputs, torch.no_grad, gradients=False)


def _ddp_rank(path: pathlib.Path, rendezvous: str, rank: int) -> dict[str, object]:
    """One rank: the entry in DistributedDataParallel (gloo), compiled with aot_eager, each input
    forward and backward; its outputs, gradients (the parameters' after the allreduce), messages."""
    import torch.distributed as distributed

    distributed.init_process_group(
        "gloo",
        init_method=f"file://{rendezvous}",
        rank=rank,
        world_size=RANKS,
        timeout=datetime.timedelta(seconds=PROCESS_TIMEOUT_S // 2),
    )
    # The DDPOptimizer will not cut a first bucket smaller than this (1 MiB): as small as the others.
    distributed._DEFAULT_FIRST_BUCKET_BYTES = int(BUCKET_MB * 1024 * 1024)
    try:
        program = where_users_run._fresh(path)
        entry = where_users_run._original(program.ENTRY)
        model = torch.nn.parallel.DistributedDataParallel(entry, bucket_cap_mb=BUCKET_MB, find_unused_parameters=True)
        compiled = torch.compile(model, backend="aot_eager")
        seen = _run(compiled, [tuple(args) for args in program.INPUTS], parameters=list(entry.parameters()))
        # DDP's reducer freed after its process group was destroyed can hang: free it first
        del compiled, model
        dynamo_harness._reset_dynamo()
        gc.collect()
        return seen
    finally:
        distributed.destroy_process_group()


@contextlib.contextmanager
def _graph_caches_in(folder: pathlib.Path) -> Iterator[None]:
    """Inductor's FX graph cache and AOTAutograd's cache kept in `folder` (empty at first), where
    `TORCHINDUCTOR_CACHE_DIR` would put them. The C++ that inductor builds stays in its own cache,
    so that a kernel built once on this machine is not built again for every program (an empty
    `TORCHINDUCTOR_CACHE_DIR` cost 30 s a program); what the graph caches serve is what is measured."""
    from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache
    from torch._inductor.codecache import FxGraphCache

    kept = FxGraphCache.__dict__["_get_tmp_dir"], AOTAutogradCache.__dict__["_get_tmp_dir"]
    FxGraphCache._get_tmp_dir = staticmethod(lambda: str(folder / "fxgraph"))  # type: ignore[method-assign]
    AOTAutogradCache._get_tmp_dir = classmethod(lambda cls: str(folder / "aotautograd"))  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        FxGraphCache._get_tmp_dir, AOTAutogradCache._get_tmp_dir = kept  # type: ignore[method-assign]


def _with_inductor_caches(path: pathlib.Path, folder: pathlib.Path) -> dict[str, object]:
    """The entry compiled with inductor in eval under `no_grad`, its graphs cached in `folder`:
    outputs, messages, and what the FX graph cache and AOTAutograd's cache did."""
    program = where_users_run._fresh(path)
    entry = where_users_run._original(program.ENTRY)
    with _graph_caches_in(folder):
        seen = _inductor(entry, [tuple(args) for args in program.INPUTS], training=False)
    counters = torch._dynamo.utils.counters
    seen["cache"] = {
        **{name: counters["inductor"][f"fxgraph_cache_{name}"] for name in ("hit", "miss", "bypass")},
        **{f"aot_{name}": counters["aot_autograd"][f"autograd_cache_{name}"] for name in ("hit", "miss", "bypass")},
    }
    return seen


def _load_traced(folder: pathlib.Path, count: int) -> dict[str, object]:
    """The traced modules `torch.save` wrote, loaded (`torch.load`) in this process, where the program
    was never imported, and each called on its input: per input what loaded, outputs, messages."""
    loads: list[str] = []
    notes: list[str] = []

    def failed(step: str, error: str) -> None:
        loads.append(f"{step}: {error.split(':')[0]}")  # what failed, and how; the text is a note
        notes.append(f"{step}: {error}")

    def body(outputs: list[object], events: list[tuple[str, str]]) -> None:
        for n in range(count):
            outputs.append(None)
            if (folder / f"traced{n}.error").exists():
                failed("save", (folder / f"traced{n}.error").read_text())
                continue
            try:
                traced = torch.load(folder / f"traced{n}.pt", weights_only=False)
            except Exception as error:  # noqa: BLE001 - an error is an observation
                failed("load", where_users_run._error(error))
                continue
            args = torch.load(folder / f"inputs{n}.pt", weights_only=False)
            try:
                outputs[-1] = dynamo_harness._detached(traced(*args))
            except Exception as error:  # noqa: BLE001
                failed("call", where_users_run._error(error))
            else:
                loads.append("loaded")

    seen = _observed(body)
    seen["loads"] = loads
    seen["notes"] = notes
    return seen


def _worker(job: pathlib.Path) -> int:
    """A worker process: run the tasks of `job` in order and write what each saw beside it. The
    program is loaded under the module name the parent gave it, as a fresh process would import it."""
    faulthandler.dump_traceback_later(PROCESS_TIMEOUT_S - 10, exit=True)  # where it hangs, in its log
    spec = pickle.loads(job.read_bytes())
    path, folder = pathlib.Path(spec["path"]), pathlib.Path(spec["folder"])
    results: dict[str, object] = {}
    for position, task in enumerate(spec["tasks"]):
        # warm_cache loads the program under the parent's name; the others under names of their own (a
        # logger of the same name would remember a `warning_once` an earlier task logged)
        number = spec["module_number"] if task == "warm_cache" else spec["module_number"] + 1 + position
        dynamo_harness._module_counter = itertools.count(number)
        if task == "ddp":
            results[task] = _ddp_rank(path, str(folder / "rendezvous"), spec["rank"])
        elif task == "warm_cache":
            results[task] = _with_inductor_caches(path, folder)
        elif task == "fx_load":
            results[task] = _load_traced(folder, spec["count"])
        dynamo_harness._reset_dynamo()
    job.with_suffix(".seen").write_bytes(pickle.dumps(results))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # nothing left to do: no exit handlers, no threads of gloo's or inductor's to wait for


def _start(folder: pathlib.Path, name: str, spec: dict[str, object]) -> subprocess.Popen:
    job = folder / f"{name}.job"
    job.write_bytes(pickle.dumps(spec))
    with open(folder / f"{name}.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, str(pathlib.Path(__file__).resolve()), "--worker", str(job)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # one process compiles at a time: no pool of compile workers to start
            env={**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"},
            start_new_session=True,  # a process group of its own: ended whole if it overruns
        )


def _finish(folder: pathlib.Path, started: dict[str, subprocess.Popen]) -> dict[str, dict[str, Any]]:
    """Wait for the workers (PROCESS_TIMEOUT_S at most), end any left, and read what each saw."""
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    failed: dict[str, str] = {}
    try:
        for name, process in started.items():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                failed[name] = f"TimeoutError: the worker ran past {PROCESS_TIMEOUT_S} s"
    finally:
        for process in started.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    seen: dict[str, dict[str, Any]] = {}
    for name, process in started.items():
        result = folder / f"{name}.seen"
        if name not in failed and result.exists():
            seen[name] = pickle.loads(result.read_bytes())
            continue
        log = (folder / f"{name}.log").read_text(errors="replace").strip().splitlines()
        seen[name] = {"error": failed.get(name) or f"WorkerError: exit {process.returncode}: {log[-1] if log else ''}"}
    return seen


def _in_processes(path: pathlib.Path, wanted: tuple[str, ...]) -> dict[str, dict[str, object] | str]:
    """`ddp`, `warm_cache` and `fx_load`, which need processes of their own. This process traces and
    saves the modules `fx_load` loads, and compiles the program with inductor into empty graph
    caches; then the 2 ranks run at once, or one fresh process where DDP does not apply (a function,
    a module without trainable parameters). Before it imports the program, one of them loads the
    traced modules; before DDP, the other compiles the program with inductor against the caches this
    one filled (its own hash seed, as any other process: a name drawn from `hash()` is not the same)."""
    seen: dict[str, dict[str, object] | str] = {}
    with tempfile.TemporaryDirectory(prefix="graphmend-contexts-") as name:
        folder = pathlib.Path(name)
        program = where_users_run._fresh(path)
        entry = where_users_run._original(program.ENTRY)
        count = len(program.INPUTS)
        if "fx_load" in wanted:
            stopped = _save_traced(entry, [tuple(args) for args in program.INPUTS], folder)
            if stopped is not None:
                seen["fx_load"] = stopped
        module_number = int(program.__name__.rsplit("_", 1)[1])
        if "warm_cache" in wanted:
            dynamo_harness._module_counter = itertools.count(module_number)  # the name the workers load it as
            filled = _with_inductor_caches(path, folder)
            if "error" in filled:  # it does not compile with inductor: nothing cached
                seen["warm_cache"] = filled
        trainable = isinstance(entry, torch.nn.Module) and any(p.requires_grad for p in entry.parameters())
        if "ddp" in wanted and not trainable:
            seen["ddp"] = NOT_APPLICABLE
        alone = [task for task in ("fx_load", "warm_cache") if task in wanted and task not in seen]
        common = {"path": str(path), "folder": name, "count": count, "module_number": module_number}
        if "ddp" in wanted and trainable:
            plans = {
                f"rank{rank}": {**common, "rank": rank, "tasks": [*alone[rank::RANKS], "ddp"]} for rank in range(RANKS)
            }
        elif alone:
            plans = {"fresh": {**common, "tasks": alone}}
        else:
            plans = {}
        started: dict[str, subprocess.Popen] = {}
        try:
            for worker, plan in plans.items():
                started[worker] = _start(folder, worker, plan)
        finally:  # each started worker waited for, or ended
            results = _finish(folder, started)
    for worker, plan in plans.items():
        for task in plan["tasks"]:
            got = results[worker]
            seen[task] = got if "error" in got else got.get(task, {"error": f"WorkerError: no {task}"})
    if "ddp" in wanted and trainable:
        observed = [results[f"rank{rank}"].get("ddp", results[f"rank{rank}"]) for rank in range(RANKS)]
        differing = sorted({kind for other in observed[1:] for kind in _kinds("ddp", observed[0], other)})
        seen["ddp"] = {**observed[0], "ranks": f"rank 0 and another differ in {differing}" if differing else "the same"}
    return {context: seen[context] for context in wanted}


def _save_traced(
    entry: Callable[..., Any], inputs: list[tuple[object, ...]], folder: pathlib.Path
) -> dict[str, object] | None:
    """The entry traced for each input and written with `torch.save`, beside its input; the error
    where it does not trace (None where each traced)."""
    entry = _uncompiled(entry)
    events: list[tuple[str, str]] = []
    for n, args in enumerate(inputs):
        try:
            with dynamo_harness._silenced(), record_effects(events):
                traced = _traced(entry, args)
            torch.save(list(args), folder / f"inputs{n}.pt")
        except Exception as error:  # noqa: BLE001 - an error is an observation
            return {"error": where_users_run._error(error), "events": events}
        try:
            torch.save(traced, folder / f"traced{n}.pt")
        except Exception as error:  # noqa: BLE001 - it does not pickle: nothing to load
            (folder / f"traced{n}.error").write_text(where_users_run._error(error))
    return None


def observe_context(path: pathlib.Path, context: str) -> dict[str, object] | str:
    """One context's observation of `path` (NOT_APPLICABLE where it cannot apply)."""
    if context in _PROCESS_CONTEXTS:
        return _in_processes(path, (context,))[context]
    if context == "adamw":
        return _adamw(path)
    program = where_users_run._fresh(path)
    entry = where_users_run._original(program.ENTRY)
    inputs = [tuple(args) for args in program.INPUTS]
    is_module = isinstance(entry, torch.nn.Module)
    parameters = list(entry.parameters()) if is_module else []

    def compiled(target: Callable[..., Any]) -> Callable[..., Any]:
        return torch.compile(target, backend="eager")

    if context == "plain":
        return _run(compiled(entry), inputs, parameters=parameters)
    if context == "submodule":
        return _run(compiled(_Parent(entry)), inputs, parameters=parameters)
    if context == "sequential":
        if not is_module or any(len(args) != 1 for args in inputs):
            return NOT_APPLICABLE
        return _run(compiled(torch.nn.Sequential(entry)), inputs, parameters=parameters)
    if context == "super":
        if not is_module:
            return NOT_APPLICABLE
        return _run(compiled(_subclassed(entry)), inputs, parameters=parameters)
    if context == "checkpoint":
        return _run(compiled(_Parent(entry, _checkpointed)), inputs, parameters=parameters)
    if context in ("no_grad", "inference_mode"):
        mode = torch.no_grad if context == "no_grad" else torch.inference_mode
        return _run(compiled(entry), inputs, mode, gradients=False)
    if context.startswith("autocast"):
        dtype = torch.float16 if context.endswith("fp16") else torch.bfloat16
        return _run(compiled(entry), inputs, lambda: torch.autocast("cpu", dtype=dtype), parameters=parameters)
    if context.startswith("export"):
        exportable = entry if is_module else where_users_run._Calling(entry)

        def exported(*args: object) -> object:
            program_ = torch.export.export(exportable, tuple(args), strict=context == "export_strict")
            return program_.module()(*args)

        return _run(exported, inputs, gradients=False)
    if context == "hooks":
        if not is_module:
            return NOT_APPLICABLE
        counts: dict[str, int] = {}
        for name, submodule in entry.named_modules():

            def count(module: object, args: object, output: object, key: str = name or "<root>") -> None:
                counts[key] = counts.get(key, 0) + 1

            submodule.register_forward_hook(count)
        seen = _run(compiled(entry), inputs, parameters=parameters)
        seen["hooks"] = dict(sorted(counts.items()))
        return seen
    if context == "shapes":
        shapes = [tuple(args) for args in getattr(program, "SHAPES", None) or _batched(inputs)]
        return _run(compiled(entry), shapes, gradients=False)
    if context in ("fake", "meta"):
        return _without_values(entry, inputs, context)
    if context == "func_grad":
        return _func_grad(entry, inputs)
    if context == "vmap":
        return _vmap(entry, inputs)
    if context == "fx":
        return _fx(entry, inputs)
    if context == "warnings_error":
        return _warnings_error(entry, inputs)
    if context in ("inductor_train", "inductor_eval"):
        return _inductor(entry, inputs, training=context == "inductor_train")
    raise ValueError(context)


_PROCESS_CONTEXTS = ("ddp", "warm_cache", "fx_load")


def observe(
    path: pathlib.Path, contexts: tuple[str, ...] = CONTEXTS, times: dict[str, float] | None = None
) -> dict[str, dict[str, object] | str]:
    """`path` in each of `contexts`; the seconds each took added to `times` (the contexts that
    start processes share them: each is given the time of all)."""
    path = pathlib.Path(path)
    times = {} if times is None else times
    in_processes = tuple(context for context in contexts if context in _PROCESS_CONTEXTS)
    seen: dict[str, dict[str, object] | str] = {}
    for context in contexts:
        if context not in in_processes:
            start = time.perf_counter()
            seen[context] = observe_context(path, context)
            times[context] = times.get(context, 0.0) + time.perf_counter() - start
    if in_processes:
        start = time.perf_counter()
        seen.update(_in_processes(path, in_processes))
        for context in in_processes:
            times[context] = times.get(context, 0.0) + time.perf_counter() - start
    dynamo_harness._reset_dynamo()
    return {context: seen[context] for context in contexts}


def differences(
    before: dict[str, dict[str, object] | str], after: dict[str, dict[str, object] | str]
) -> dict[str, dict[str, str]]:
    """What the rewrite changes, by context, then by kind (outputs, gradients, messages, hooks,
    graphs, raises; and what a context observes of its own: `ranks`, `cache`, `loads`, `state`,
    `parameters`, `none_gradients`), each with what was seen."""
    found: dict[str, dict[str, str]] = {}
    for context, old in before.items():
        new = after[context]
        if old == NOT_APPLICABLE:
            continue
        assert isinstance(old, dict) and isinstance(new, dict)
        kinds = _kinds(context, old, new, after.get("plain"))
        if kinds:
            found[context] = kinds
    return found


# What every observation may hold; any other key is one a context observes of its own.
_COMMON = frozenset(
    ("outputs", "events", "gradients", "graphs", "recompiles", "hooks", "error", "cache", "parts", "notes")
)


def _kinds(context: str, old: dict[str, Any], new: dict[str, Any], plain: object = None) -> dict[str, str]:
    """The kinds of difference between two observations of one context (by part, where it has parts)."""
    kinds: dict[str, str] = {}
    if "parts" in old or "parts" in new:
        for part in old.get("parts", {}):
            for kind, seen in _kinds(context, old["parts"][part], new["parts"][part], plain).items():
                kinds[kind] = f"{kinds[kind]}; {part}: {seen}" if kind in kinds else f"{part}: {seen}"
        return kinds
    if "error" in old or "error" in new:
        if _changes_what_raises(context, old.get("error"), new.get("error")):
            kinds["raises"] = f"{old.get('error')} → {new.get('error')}"
        return kinds
    if not where_users_run._same(old.get("outputs"), new.get("outputs")):
        kinds["outputs"] = "values, dtypes or shapes"
    if not where_users_run._same(old.get("gradients"), new.get("gradients")):
        kinds["gradients"] = "values or where they flow"
    if old["events"] != new["events"]:
        kinds["messages"] = f"{old['events']} → {new['events']}"
    if old.get("hooks") != new.get("hooks"):
        kinds["hooks"] = f"{old.get('hooks')} → {new.get('hooks')}"
    if context == "shapes" and _more_compiles(old, new, plain):
        kinds["graphs"] = (
            f"graphs {old['graphs']} → {new['graphs']}, recompiles {old['recompiles']} → {new['recompiles']}"
        )
    if "cache" in old and _misses_more(old["cache"], new["cache"]):
        kinds["cache"] = f"{old['cache']} → {new['cache']}"
    for key in sorted((old.keys() | new.keys()) - _COMMON):
        if not where_users_run._same(old.get(key), new.get(key)):
            kinds[key] = f"{_brief(old.get(key))} → {_brief(new.get(key))}"
    return kinds


def _stable(text: str) -> str:
    """An error's text without the numbers a process draws (`hash()` in an operator's name)."""
    return re.sub(r"_\d{8,}\b", "_<n>", text)


def _misses_more(old: dict[str, int], new: dict[str, int]) -> bool:
    """Whether a warm cache serves the rewrite less: more graphs inductor compiles cold (FX graph
    cache misses and bypasses) or AOTAutograd cannot cache (bypasses) than the original had. An
    AOTAutograd miss alone is a graph with nothing for inductor to compile (no FX graph looked up),
    which no cache holds: it misses in every process, at no compile's cost."""
    return any(new[name] > old[name] for name in ("miss", "bypass", "aot_bypass"))


def _brief(value: object) -> str:
    """A value as a difference shows it: tensors by their shapes."""
    text = repr(_shapes(value))
    return text if len(text) <= 300 else text[:300] + "…"


def _changes_what_raises(context: str, old: str | None, new: str | None) -> bool:
    """Whether the program raises where it did not, or no longer raises where it did. Not counted:
    an export the break stopped that now succeeds (what removing the break is for; also fake and
    meta tensors, vmap, symbolic_trace: `_RUNS_WHERE_THE_BREAK_STOPPED`), a Dynamo error of its own
    that is gone (`This is a bug`), and a program that raised and still raises (in a context it
    cannot run in either way)."""
    if old is not None and new is not None:
        return False
    if old is not None and (context in _RUNS_WHERE_THE_BREAK_STOPPED or "This is a bug" in old):
        return False
    return old != new


def _more_compiles(old: dict[str, Any], new: dict[str, Any], plain: object) -> bool:
    """More graphs or recompiles over other sizes. A frame that ran eagerly before (0 graphs: a break
    in a loop) now compiles, which is the fix's point: its specialisations on Python arguments count
    for the first time (as many as the program's own inputs make, `plain`), and a new size then
    costs one recompile before automatic dynamic shapes take over; only recompiles past those count."""
    if old["graphs"] == 0:
        specialised = plain.get("recompiles", 0) if isinstance(plain, dict) else 0
        return bool(new["recompiles"] > specialised + 1)
    return bool(new["graphs"] > old["graphs"] or new["recompiles"] > old["recompiles"])


# A kind of difference that follows from one the program shows compiled as it is: parameters an
# optimiser moved differ where the gradients differ (not so whether a gradient is none or zero).
_FOLLOWS = {"parameters": "gradients"}


def unnamed(found: dict[str, dict[str, str]], hazards: list[str]) -> dict[str, dict[str, str]]:
    """The differences no hazard names. One the program shows compiled as it is (`plain`) is the
    rewrite's change itself, named by its hazards and held to them by `where_users_run` (and so is
    one that follows from it, `_FOLLOWS`); one a context adds must be named by a hazard with that
    context's words."""
    text = " ".join(hazards).lower()
    general = set(found.get("plain", {}))
    left: dict[str, dict[str, str]] = {}
    for context, kinds in found.items():
        if context == "plain":
            if not hazards:
                left[context] = kinds
            continue
        added = {
            kind: seen for kind, seen in kinds.items() if kind not in general and _FOLLOWS.get(kind) not in general
        }
        if added and not any(word in text for word in NAMED_BY[context]):
            left[context] = added
    return left


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        return _worker(pathlib.Path(argv[1]))
    first = observe(pathlib.Path(argv[0]))
    for context, seen in first.items():
        print(context, seen if isinstance(seen, str) else {k: v for k, v in seen.items() if k != "outputs"})
    if len(argv) > 1:
        print(differences(first, observe(pathlib.Path(argv[1]))))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
