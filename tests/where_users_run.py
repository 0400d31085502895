"""Run a corpus program the ways users run it, and name what a rewrite changes there (issue 42).

`dynamo_harness.run_observed_with_gradients` compares one forward and backward. Users also train
for several steps, compile with inductor, export, script and serve their models; a rewrite labelled
safe must change nothing there either, and an unsafe one must name each change. `observe` runs a
program each of those ways; `differences` names, by kind, what two observations do not share; and
`NAMED_BY` says which words of a fix's hazards name a kind of difference.

Run `python tests/where_users_run.py FILE [FIXED]` to see one program's observation (and the
differences from its rewrite).
"""

from __future__ import annotations

import contextlib
import pathlib
import re
import sys
import types
import warnings
from dataclasses import dataclass
from typing import Any

import dynamo_harness
import torch
import torch._dynamo.utils
import torch._inductor.config

from graphmend.verify import record_effects

STEPS = 3
RECOMPILES_LOGGER = "torch._dynamo.guards.__recompiles"
# What each kind of difference is called in a fix's hazards: a difference a fix causes must be named
# by one of its hazards containing one of these words.
NAMED_BY = {
    "training": ("gradient", "optimi"),
    "graphs": ("recompile", "graph"),
    "inductor": ("inductor", "random"),
    "random": ("random",),
    "export": ("export",),
    "script": ("script",),
    "state": ("state", "buffer", "load_state_dict"),
    "warnings": ("warnings-as-errors",),
}
_RANDOM_OPS = frozenset(
    """rand rand_like randn randn_like randint randint_like randperm bernoulli bernoulli_ normal normal_
    uniform_ exponential_ random_ multinomial poisson dropout dropout1d dropout2d dropout3d alpha_dropout
    feature_alpha_dropout rrelu gumbel_softmax native_dropout""".split()
)


@dataclass
class Observed:
    """One program run each way a user runs it; None where that way does not apply."""

    trained: dict[str, list[torch.Tensor]] | None = None  # parameters after STEPS steps, per optimiser
    graphs: int = 0  # graphs compiled over every input (the program's own backend)
    skipped: int = 0  # frames Dynamo gave up on (a break in a loop): they run eagerly, a graph's worth
    recompiles: int = 0  # guard failures that compiled a frame again
    inductor: list[object] | str | None = None  # outputs under inductor (fallback_random), or its error
    random_in_graphs: int = 0  # random ops inside the compiled graphs
    exported: tuple[list[object], list[tuple[str, str]]] | None = None  # outputs and messages (export and runs)
    scripted: list[object] | str | None = None  # outputs under torch.jit.script, or its error
    state_round_trip: list[str | None] | None = None  # per input: load_state_dict's error after inference_mode
    strict_warnings: list[tuple[str | None, list[torch.Tensor]]] | None = None  # per input under -W error


def _original(entry: Any) -> Any:
    """The callable a program compiles: the module or the function inside torch.compile's wrapper."""
    return getattr(entry, "_orig_mod", None) or getattr(entry, "_torchdynamo_orig_callable", None) or entry


def _fresh(path: pathlib.Path) -> types.ModuleType:
    """The program loaded anew, with the same random weights each time."""
    dynamo_harness._reset_dynamo()
    torch.manual_seed(0)
    with dynamo_harness._silenced():
        return dynamo_harness.load_program(path)


def _losses(output: object) -> list[torch.Tensor]:
    return [t.sum() for t in dynamo_harness._tensors(output) if t.requires_grad and t.is_floating_point()]


def _train(path: pathlib.Path) -> dict[str, list[torch.Tensor]] | None:
    """The parameters after STEPS steps of SGD with momentum and of AdamW with weight decay, each
    step's gradient summed over every input (so every branch trains), gradients set to None between
    steps as `zero_grad(set_to_none=True)` does: a zero gradient where there was none moves a
    parameter under weight decay or momentum."""
    optimisers = {
        "SGD": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
        "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
    }
    trained: dict[str, list[torch.Tensor]] = {}
    for name, make in optimisers.items():
        module = _fresh(path)
        parameters = list(module.ENTRY.parameters()) if isinstance(module.ENTRY, torch.nn.Module) else []
        if not parameters:
            return None
        optimiser = make(parameters)
        with dynamo_harness._silenced():
            for _ in range(STEPS):
                optimiser.zero_grad(set_to_none=True)
                for args in module.INPUTS:
                    losses = _losses(module.ENTRY(*args))
                    if losses:
                        torch.stack(losses).sum().backward()
                optimiser.step()
        trained[name] = [p.detach().clone() for p in parameters]
    return trained


def _count_compiles(path: pathlib.Path) -> tuple[int, int, int]:
    """Graphs, frames skipped, and recompiles (records of Dynamo's `recompiles` log)."""
    module = _fresh(path)
    with dynamo_harness.capture_log(RECOMPILES_LOGGER, "recompiles") as recompiles, dynamo_harness._silenced():
        for args in module.INPUTS:
            module.ENTRY(*args)
    frames = torch._dynamo.utils.counters["frames"]
    return int(torch._dynamo.utils.counters["stats"]["unique_graphs"]), frames["total"] - frames["ok"], len(recompiles)


def _random_ops(path: pathlib.Path) -> int:
    """Random ops in the graphs Dynamo captures: under inductor these draw from its own generator,
    not eager's, so a random op that moves into a graph draws other numbers for the same seed."""
    found = 0

    def counting(graph: torch.fx.GraphModule, example_inputs: list[object]) -> object:
        nonlocal found
        for node in graph.graph.nodes:
            target = node.target if node.op in ("call_function", "call_method") else None
            name = target if isinstance(target, str) else getattr(target, "__name__", "")
            found += name in _RANDOM_OPS
        return graph.forward

    module = _fresh(path)
    compiled = torch.compile(_original(module.ENTRY), backend=counting)
    with dynamo_harness._silenced():
        for args in module.INPUTS:
            compiled(*args)
    return found


def _inductor(path: pathlib.Path) -> list[object] | str:
    module = _fresh(path)
    compiled = torch.compile(_original(module.ENTRY), backend="inductor")
    outputs: list[object] = []
    try:
        with torch._inductor.config.patch(fallback_random=True), dynamo_harness._silenced(), torch.no_grad():
            for args in module.INPUTS:
                outputs.append(dynamo_harness._detached(compiled(*args)))
    except Exception as error:  # noqa: BLE001 - an error is an observation
        return _error(error)
    return outputs


class _Calling(torch.nn.Module):
    """A function as a module, for torch.export."""

    def __init__(self, function: object) -> None:
        super().__init__()
        self.function = function

    def forward(self, *args: object) -> object:
        return self.function(*args)


def _export(path: pathlib.Path) -> tuple[list[object], list[tuple[str, str]]] | str:
    """Each input exported on its own (export specialises shapes) and the program run on it: the
    outputs, and the messages of export and runs in order."""
    module = _fresh(path)
    original = _original(module.ENTRY)
    exportable = original if isinstance(original, torch.nn.Module) else _Calling(original)
    outputs: list[object] = []
    events: list[tuple[str, str]] = []
    try:
        with record_effects(events):
            for args in module.INPUTS:
                program = torch.export.export(exportable, tuple(args))
                events.append(("export", "done"))
                outputs.append(dynamo_harness._detached(program.module()(*args)))
    except Exception as error:  # noqa: BLE001
        return _error(error)
    return outputs, events


def _script(path: pathlib.Path) -> list[object] | str:
    module = _fresh(path)
    try:
        with dynamo_harness._silenced():
            scripted = torch.jit.script(_original(module.ENTRY))
            return [dynamo_harness._detached(scripted(*args)) for args in module.INPUTS]
    except Exception as error:  # noqa: BLE001
        return _error(error)


def _error(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def _state_round_trip(path: pathlib.Path, inputs: int) -> list[str | None]:
    """Per input, on a fresh module: a pass under inference_mode, then loading the module's own
    state, as serving code does; the error, or None."""
    errors: list[str | None] = []
    for position in range(inputs):
        module = _fresh(path)
        try:
            with dynamo_harness._silenced():
                with torch.inference_mode():
                    module.ENTRY(*module.INPUTS[position])
                module.ENTRY.load_state_dict(module.ENTRY.state_dict())
        except Exception as error:  # noqa: BLE001
            errors.append(_error(error))
        else:
            errors.append(None)
    return errors


def _strict_warnings(path: pathlib.Path, inputs: int) -> list[tuple[str | None, list[torch.Tensor]]]:
    """Per input, on a fresh module, under a filter that makes warnings errors (pytest `-W error`):
    what the call raises, and the module's state after it."""
    seen: list[tuple[str | None, list[torch.Tensor]]] = []
    for position in range(inputs):
        module = _fresh(path)
        error: str | None = None
        with dynamo_harness._silenced(), warnings.catch_warnings():
            # the program's own warnings (torch's, from inside Dynamo, are not the program's)
            warnings.filterwarnings("error", module=re.escape(module.__name__) + "$")
            try:
                module.ENTRY(*module.INPUTS[position])
            except Exception as raised:  # noqa: BLE001 - the warning, raised
                error = type(raised).__name__
        state = [t.detach().clone() for t in module.ENTRY.state_dict().values()] if _is_module(module) else []
        seen.append((error, state))
    return seen


def _is_module(module: types.ModuleType) -> bool:
    return isinstance(_original(module.ENTRY), torch.nn.Module)


def observe(path: pathlib.Path, inductor: bool = True) -> Observed:
    """`path` run each way that applies to it (inductor only when asked: it compiles C++)."""
    path = pathlib.Path(path)
    seen = Observed()
    seen.trained = _train(path)
    seen.graphs, seen.skipped, seen.recompiles = _count_compiles(path)
    seen.random_in_graphs = _random_ops(path)
    if inductor:
        seen.inductor = _inductor(path)
    exported = _export(path)
    seen.exported = None if isinstance(exported, str) else exported
    seen.scripted = _script(path)
    program = _fresh(path)
    if _is_module(program):
        seen.state_round_trip = _state_round_trip(path, len(program.INPUTS))
    seen.strict_warnings = _strict_warnings(path, len(program.INPUTS))
    dynamo_harness._reset_dynamo()
    return seen


def _same(a: object, b: object) -> bool:
    """Equal values, dtypes and shapes, NaN where NaN; floating values to rounding (inductor fuses
    a graph the rewrite joined differently from the two it had)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return torch.allclose(a, b, equal_nan=True) if a.is_floating_point() else torch.equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def differences(before: Observed, after: Observed) -> dict[str, str]:
    """What the rewrite changes, by kind (the keys of NAMED_BY), each with what was seen."""
    found: dict[str, str] = {}
    if before.trained is not None and not _same(before.trained, after.trained):
        found["training"] = f"the parameters differ after {STEPS} optimiser steps"
    if adds_compiles(before, after):
        found["graphs"] = (
            f"graphs {before.graphs} → {after.graphs}, recompiles {before.recompiles} → {after.recompiles}"
        )
    if before.inductor is not None and not _same(before.inductor, after.inductor):
        found["inductor"] = f"under inductor: {_shown(before.inductor)} → {_shown(after.inductor)}"
    if after.random_in_graphs > before.random_in_graphs:
        found["random"] = f"random ops in graphs {before.random_in_graphs} → {after.random_in_graphs}"
    if before.exported is not None and (after.exported is None or not _same(before.exported, after.exported)):
        found["export"] = "the exported program differs" if after.exported is not None else "no longer exports"
    if not isinstance(before.scripted, str) and not _same(before.scripted, after.scripted):
        found["script"] = f"torch.jit.script: {_shown(after.scripted)}"
    for old, new in zip(before.state_round_trip or [], after.state_round_trip or []):
        if old is None and new is not None:
            found["state"] = f"load_state_dict after inference_mode: {new}"
    if not _same(before.strict_warnings, after.strict_warnings):
        found["warnings"] = "under warnings as errors, what is raised or the module's state after it differs"
    return found


def adds_compiles(before: Observed, after: Observed) -> bool:
    """Whether the rewrite makes more graphs or recompiles, where the original compiled every frame
    it met. A frame Dynamo skipped (a break in a loop) ran eagerly, and the breaks after the first
    in it were never met: once a rewrite lets it compile, its pieces and its specialisations on
    Python arguments count for the first time, which is no cost the rewrite adds."""
    if before.skipped:
        return False
    return after.graphs > before.graphs or after.recompiles > before.recompiles


def _shown(value: object) -> str:
    return value if isinstance(value, str) else "values"


def unnamed(found: dict[str, str], hazards: list[str]) -> dict[str, str]:
    """The differences no hazard names."""
    text = " ".join(hazards).lower()
    return {kind: seen for kind, seen in found.items() if not any(word in text for word in NAMED_BY[kind])}


def main(argv: list[str]) -> int:
    first = observe(pathlib.Path(argv[0]))
    print(first)
    if len(argv) > 1:
        print(differences(first, observe(pathlib.Path(argv[1]))))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
