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

Run `python tests/where_code_runs.py FILE [FIXED]` to see one program's observations (and the
differences from its rewrite).
"""

from __future__ import annotations

import contextlib
import pathlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import dynamo_harness
import torch
import torch._dynamo.utils
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
)
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
}
NOT_APPLICABLE = "not applicable"


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
            with record_effects(events), dynamo_harness._silenced():
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


def observe_context(path: pathlib.Path, context: str) -> dict[str, object] | str:
    """One context's observation of `path` (NOT_APPLICABLE where it cannot apply)."""
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
    raise ValueError(context)


def observe(path: pathlib.Path, contexts: tuple[str, ...] = CONTEXTS) -> dict[str, dict[str, object] | str]:
    seen = {context: observe_context(pathlib.Path(path), context) for context in contexts}
    dynamo_harness._reset_dynamo()
    return seen


def differences(
    before: dict[str, dict[str, object] | str], after: dict[str, dict[str, object] | str]
) -> dict[str, dict[str, str]]:
    """What the rewrite changes, by context, then by kind (outputs, gradients, messages, hooks,
    graphs, raises), each with what was seen."""
    found: dict[str, dict[str, str]] = {}
    for context, old in before.items():
        new = after[context]
        if old == NOT_APPLICABLE:
            continue
        assert isinstance(old, dict) and isinstance(new, dict)
        kinds: dict[str, str] = {}
        if "error" in old or "error" in new:
            if _changes_what_raises(context, old.get("error"), new.get("error")):
                kinds["raises"] = f"{old.get('error')} → {new.get('error')}"
        else:
            if not where_users_run._same(old["outputs"], new["outputs"]):
                kinds["outputs"] = "values, dtypes or shapes"
            if not where_users_run._same(old["gradients"], new["gradients"]):
                kinds["gradients"] = "values or where they flow"
            if old["events"] != new["events"]:
                kinds["messages"] = f"{old['events']} → {new['events']}"
            if old.get("hooks") != new.get("hooks"):
                kinds["hooks"] = f"{old.get('hooks')} → {new.get('hooks')}"
            if context == "shapes" and _more_compiles(old, new, after.get("plain")):
                kinds["graphs"] = (
                    f"graphs {old['graphs']} → {new['graphs']}, recompiles {old['recompiles']} → {new['recompiles']}"
                )
        if kinds:
            found[context] = kinds
    return found


def _changes_what_raises(context: str, old: str | None, new: str | None) -> bool:
    """Whether the program raises where it did not, or no longer raises where it did. Not counted:
    an export the break stopped that now succeeds (what removing the break is for), a Dynamo error
    of its own that is gone (`This is a bug`), and a program that raised and still raises (in a
    context it cannot run in either way)."""
    if old is not None and new is not None:
        return False
    if old is not None and (context.startswith("export") or "This is a bug" in old):
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


def unnamed(found: dict[str, dict[str, str]], hazards: list[str]) -> dict[str, dict[str, str]]:
    """The differences no hazard names. One the program shows compiled as it is (`plain`) is the
    rewrite's change itself, named by its hazards and held to them by `where_users_run`; one a
    context adds must be named by a hazard with that context's words."""
    text = " ".join(hazards).lower()
    general = set(found.get("plain", {}))
    left: dict[str, dict[str, str]] = {}
    for context, kinds in found.items():
        if context == "plain":
            if not hazards:
                left[context] = kinds
            continue
        added = {kind: seen for kind, seen in kinds.items() if kind not in general}
        if added and not any(word in text for word in NAMED_BY[context]):
            left[context] = added
    return left


def main(argv: list[str]) -> int:
    first = observe(pathlib.Path(argv[0]))
    for context, seen in first.items():
        print(context, seen if isinstance(seen, str) else {k: v for k, v in seen.items() if k != "outputs"})
    if len(argv) > 1:
        print(differences(first, observe(pathlib.Path(argv[1]))))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
