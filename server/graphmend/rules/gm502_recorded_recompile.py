from __future__ import annotations

import re

from ..diagnostics import Severity
from ..record import guards
from ..record.runs import RecordedEvent
from ..record.trace import RECOMPILE
from .base import RecordedRule, RuleDocs

_SIZE, _TENSOR, _VALUE, _LENGTH, _SPECIALIZED = (
    guards.SIZE,
    guards.TENSOR,
    guards.VALUE,
    guards.LENGTH,
    guards.SPECIALIZED,
)
_KEEP = {"stride": "layout (`.contiguous()`)", "requires_grad": "`requires_grad`"}


def advice(event: RecordedEvent) -> str:
    """What to do about a recompile, one imperative clause, in the user's own names (`guards.spoken`;
    a value only Dynamo's stack held is not named)."""
    guard = guards.spoken(event.guard or "", event.carried)
    if guards.names_carried(guard):
        return "Remove the graph break above this line: a value it carried into the code after it changed between calls"
    if found := _SIZE.search(guard):
        name, dim = found["name"], found["dim"]
        once = f"Expect one recompile when dimension {dim} of `{name}` first changes (torch then compiles it dynamic)"
        if not name.isidentifier() or name == event.carried:  # not an argument the caller could mark
            return once
        return (
            f"{once}; to save it, mark it dynamic before the first call (`torch._dynamo.mark_dynamic({name}, {dim})`)"
        )
    if found := _SPECIALIZED.match(guard):
        name, dim = found["name"], found["dim"]
        return (
            f"Expect a recompile when dimension {dim} of `{name}` is 0 or 1 (torch specializes those sizes); "
            f"if such sizes are normal, mark it unbacked (`torch._dynamo.decorators.mark_unbacked({name}, {dim})`)"
        )
    if found := _TENSOR.search(guard):
        keep = _KEEP.get(found["what"], found["what"])
        return f"Pass `{found['name']}` with the same {keep} on every call"
    return _object_advice(guard) or _value_advice(guard, event.carried)


def _object_advice(guard: str) -> str | None:
    if "___check_obj_id" in guard and ".__code__" in guard:
        return "Pass the same function here on every call, or compile each function apart"
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return "Build this object once, outside the call"
    if "___check_type_id" in guard or "TYPE_MATCH" in guard:
        return "Pass values of one type here"
    if "global_state" in guard.lower() or "grad_mode" in guard:
        return "Call it under one grad mode and autocast state, or compile one function per mode"
    return None


def _value_advice(guard: str, carried: str | None) -> str:
    if found := _LENGTH.match(guard):
        return f"Keep the length of `{found['name']}` the same on every call, or pass a tensor"
    if found := _VALUE.match(guard):
        name, value = found["name"], found["value"]
        if value in ("True", "False"):
            return (
                f"Expect one compile per value of `{name}` (two at most); to have one, keep it fixed for this "
                "compiled function or branch outside it"
            )
        if name.startswith("self."):
            return f"Keep `{name}` fixed between calls or hold it in a tensor buffer"
        if carried is not None and name.startswith(carried):
            return f"Make `{name}` a tensor where it is computed, or remove the graph break it crosses"
        if re.fullmatch(r"-?\d+", value):
            return f"Pass `{name}` as a tensor, or compile with `dynamic=True`"
        return f"Pass `{name}` as a tensor"
    return "Keep what this guard checks the same on every call"


def expected(events: list[RecordedEvent]) -> bool:
    """Whether the recompiles are what torch does once by design: a size that first changes (then
    dynamic), a size of 0 or 1, a bool's other value; met once in all."""
    if sum(e.count for e in events) > 1:
        return False
    guard = guards.spoken(events[0].guard or "")
    value = _VALUE.match(guard)
    return bool(_SIZE.search(guard) or _SPECIALIZED.match(guard) or (value and value["value"] in ("True", "False")))


class RecordedRecompile(RecordedRule):
    """A recompile the recorded run met, at the line that made the failed guard."""

    docs = RuleDocs(
        what=(
            "reports a recompile that the newest run recorded by `graphmend record` met: the guard that "
            "failed (of the newest compile: torch lists every cached compile's failure), at the line whose "
            "value made it (a shape guard at the compiled function's first line), and what to do about it, "
            "in your code's names (Dynamo's `L['x']`, `___stack0` and `__import___main__.X` are said as the "
            "line that made them names them). A recompile at a line with a static finding is reported apart: "
            "the finding counts the breaks, this one the recompiles. What torch does once by design (a size "
            "that first changes and then stays dynamic, a size of 0 or 1, a bool's other value), met once, "
            "is information, not a warning."
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
        return f"{advice(event)}: the recorded run recompiled here"

    @classmethod
    def action_for_event(cls, event: RecordedEvent) -> str | None:
        return advice(event)

    @classmethod
    def severity_for(cls, events: list[RecordedEvent]) -> Severity:
        return Severity.INFORMATION if expected(events) else cls.severity
