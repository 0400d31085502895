from __future__ import annotations

import re

from ..record.runs import RecordedEvent
from ..record.trace import RECOMPILE
from .base import RecordedRule, RuleDocs

_SIZE = re.compile(r"tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)")
_TENSOR = re.compile(r"tensor '(?P<name>[^']+)' (?P<what>stride|dtype|device|requires_grad|dispatch key set) mismatch")
_VALUE = re.compile(r"^(?P<name>[\w.]+) == [-\w.'\"]+$")
_LENGTH = re.compile(r"^len\((?P<name>[\w.]+)\) == \d+$")
_SOURCE = re.compile(r"\b[LG]\['([^']+)'\]")  # older releases name a local `L['x']`, a global `G['x']`


def _spoken(guard: str) -> str:
    """The guard as the user's code names things: `L['self'].n` → `self.n`."""
    return _SOURCE.sub(r"\1", guard).strip()


def advice(guard: str) -> str:
    """What to do about a recompile whose failed guard is `guard`, one imperative clause."""
    guard = _spoken(guard)
    if found := _SIZE.search(guard):
        name, dim = found["name"], found["dim"]
        return (
            f"Mark dimension {dim} of `{name}` dynamic (`torch._dynamo.mark_dynamic({name}, {dim})` before "
            "the call) or compile with `dynamic=True`"
        )
    if found := _TENSOR.search(guard):
        keep = {"stride": "its layout (`.contiguous()`)", "requires_grad": "its `requires_grad`"}
        return f"Pass `{found['name']}` with the same {keep.get(found['what'], found['what'])} on every call"
    if "___check_obj_id" in guard and ".__code__" in guard:
        return "Pass the same function here on every call, or compile each function apart"
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return "Build this object once, outside the call"
    if "___check_type_id" in guard or "TYPE_MATCH" in guard:
        return "Pass values of one type here"
    if "global_state" in guard.lower() or "grad_mode" in guard:
        return "Call it under one grad mode and autocast state, or compile one function per mode"
    if found := _LENGTH.match(guard):
        return f"Keep the length of `{found['name']}` the same on every call, or pass a tensor"
    if found := _VALUE.match(guard):
        name = found["name"]
        if name.startswith("self."):
            return f"Keep `{name}` fixed between calls or hold it in a tensor buffer"
        return f"Pass `{name}` as a tensor or compile with `dynamic=True`"
    return "Keep what this guard checks the same on every call"


class RecordedRecompile(RecordedRule):
    """A recompile the recorded run met, at the line that made the failed guard."""

    docs = RuleDocs(
        what=(
            "reports a recompile that the newest run recorded by `graphmend record` met: the guard that "
            "failed, at the line whose value made it (a shape guard at the compiled function's first line), "
            "and what to do about it."
        ),
        why=(
            "Dynamo guards each graph on what it assumed (a Python number's value, a tensor's size, dtype "
            "or device, an object's identity); a call that breaks a guard compiles the function again, which "
            "costs seconds, and after `torch._dynamo.config.recompile_limit` (8) compilations Dynamo runs "
            "the function eagerly. Source alone cannot say which values change between calls."
        ),
        why_title="Why it hurts",
        example=("@torch.compile\ndef scale(x, n):\n    return x * n  # n changes on every call"),
        action=(
            "Make what the guard checks stay the same between calls: mark a changing dimension dynamic, pass "
            "a changing number as a tensor, build a module once outside the loop."
        ),
        fix="none: the finding says what to do for the guard that failed (a dimension, a number, an object).",
    )

    code = "GM502"
    name = "recorded-recompile"
    message = "Keep what this guard checks the same on every call: the recorded run recompiled here"
    event_kind = RECOMPILE

    @classmethod
    def message_for_event(cls, event: RecordedEvent) -> str:
        return f"{advice(event.guard or '')}: the recorded run recompiled here"

    @classmethod
    def action_for_event(cls, event: RecordedEvent) -> str | None:
        return advice(event.guard or "")
