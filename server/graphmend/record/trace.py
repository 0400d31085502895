"""Torch's structured-trace records, normalised into the events a user acts on.

While it compiles, torch writes records to the logger `torch.__trace` (what `TORCH_TRACE` saves and
tlparse reads). Three kinds say what went wrong, at the user's lines:

- `dynamo_graph_break_reason` (an artifact): "Graph break in user code at F:L", the reason blocks
  (break type, explanation, hints, the gb page) and the whole user traceback, from the script
  through the user's call to the library line;
- `recompile_reasons` (an artifact): the guard that failed, with a "User stack trace" when a source
  line made the guard (a shape guard has none: it belongs to the compiled frame);
- `compilation_metrics`: one per compile: the stack that called the compiled code, the compiled
  code's file and first line, a compile failure (`fail_type`, `fail_reason`, `fail_user_frame_*`)
  and `cudagraph_skip_reason`.

Where a release lacks one of these records, the same facts come from the `graph_breaks` and
`recompiles` text logs (`graph_break_text`, `recompiles_text`): the same texts, less the stack of a
repeated break.

None of this is a promised interface (docs/record.md says what was measured on which release), so
the parsing keys on the few anchors torch's own tests pin ("Graph break in user code at", "User
code traceback:", "Traceback (most recent call last):") and keeps what it cannot parse as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_GB_URL = re.compile(r"/gb/gb(\d{4})\.html")
_SITE = re.compile(
    r"Graph break (?:\(user stack suppressed [^)]*\) )?in user code at (?P<path>.+):(?P<line>\d+)$", re.M
)
_COMPILE_ID = re.compile(r"^\s*\d+/\d+:\s*")
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*: ")  # "torch._dynamo.exc.Unsupported: "
_GUARD_SITE = re.compile(r"^(?P<path>[^:()]+?):(?P<line>\d+) in (?P<func>[^\s()]+)(?: \(.*\))?$")  # 2.13 adds "(...)"
_RECOMPILING = re.compile(r"^Recompiling function (?P<func>\S+) in (?P<path>.+):(?P<line>\d+)$")
_TRACEBACK = "\nTraceback (most recent call last):"
_FOUND_FROM = re.compile(r"\s*Found from\s*:")
_STACK_ENTRY = re.compile(r"^Line: (?P<line>\d+), Name: (?P<func>.*?), Filename: (?P<path>.+)$")

GRAPH_BREAK = "graph_break"
RECOMPILE = "recompile"
COMPILE_FAILURE = "compile_failure"
CUDAGRAPH_SKIP = "cudagraph_skip"


@dataclass(frozen=True)
class Frame:
    path: str  # as the run named it (made absolute against the run's folder when written)
    line: int  # 1-based
    func: str
    text: str = ""  # the source line the traceback quotes, stripped ("" when it quotes none)


@dataclass(frozen=True)
class Event:
    """One thing a run's compile met, at the frames that led there (outermost first)."""

    kind: str  # GRAPH_BREAK, RECOMPILE, COMPILE_FAILURE or CUDAGRAPH_SKIP
    reason: str  # Dynamo's words: the break type and its explanation, the guard, the failure
    frames: tuple[Frame, ...] = ()
    gb_type: str | None = None  # the break type (the first line of the innermost reason block)
    gb_id: str | None = None  # its page, "GB0170" (from the URL, else from the registry by type)
    compile_id: str = ""  # "frame/compile" of the compile that logged it
    stack: str = "complete"  # "incomplete": not the whole user stack (the compiled code's start, a text log)
    extra: dict[str, str] = field(default_factory=dict, compare=False)  # e.g. a recompile's guard


MAX_LINE = 10_000_000  # no source file has more lines: a larger number is not a line


def _line(value: object) -> int:
    """A line number as a record gives it (an int, or its digits), or 0 when it is none."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return 0
    try:
        number = int(value)
    except ValueError:
        return 0
    return number if 0 < number <= MAX_LINE else 0


def frames_of(traceback_text: str) -> tuple[Frame, ...]:
    """The frames of a Python traceback's text, each with the source line it quotes."""
    found: list[Frame] = []
    lines = traceback_text.splitlines()
    for number, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is None or not _line(match["line"]):
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ""
        quoted = following.startswith("    ") and not _FRAME.match(following) and following.strip("^~ ")
        found.append(Frame(match["path"], int(match["line"]), match["func"], following.strip() if quoted else ""))
    return tuple(found)


def _innermost_reason(text: str) -> tuple[str | None, str]:
    """(break type, "type: explanation") of the innermost reason block: a wrapping reason ("Failed
    to handle graph break gracefully...") comes first and the cause after it."""
    lines = text.splitlines()
    explanations = [n for n, line in enumerate(lines) if line.strip().startswith("Explanation:")]
    if not explanations:
        first = next((line.strip() for line in lines if line.strip()), "")
        return None, first
    at = explanations[-1]
    gb_type = next((_EXCEPTION.sub("", lines[n].strip()) for n in range(at - 1, -1, -1) if lines[n].strip()), None)
    explanation = lines[at].strip().removeprefix("Explanation:").strip()
    return gb_type, f"{gb_type}: {explanation}" if gb_type else explanation


def graph_break(payload: str, compile_id: str, registry: dict[str, str]) -> Event:
    """A `dynamo_graph_break_reason` artifact as an event (the frames: the user traceback; a frame
    Dynamo skips names its user code before Dynamo's own traceback, and its reason after)."""
    head, marker, rest = payload.partition("\nUser code traceback:\n")
    frames = frames_of((rest if marker else head).split(_TRACEBACK, 1)[0])
    if not frames:  # no traceback (a repeated break in the text log): the site line alone
        site = _SITE.search(head)
        frames = (Frame(site["path"], _line(site["line"]), ""),) if site and _line(site["line"]) else ()
    gb_type, reason = _innermost_reason(head.split("Graph Break Reason:", 1)[-1])
    urls = _GB_URL.findall(head)
    gb_id = f"GB{urls[-1]}" if urls else registry.get(gb_type or "")
    return Event(GRAPH_BREAK, reason, frames, gb_type, gb_id, compile_id)


def recompile_reasons(payload: str, compile_id: str) -> Event:
    """A `recompile_reasons` artifact as one recompile: the guard of the newest compile that failed
    (torch lists each cached compile's failure, newest first: the older ones failed before and fail
    again), with the user line that made it when torch names one (else no frames: the compiled
    frame is known only from its metrics)."""
    reasons = [payload]
    if payload.startswith("["):
        try:
            reasons = [str(r) for r in json.loads(payload)] or [payload]
        except (ValueError, RecursionError):
            pass
    return _recompile(reasons[0], compile_id)


def _recompile(text: str, compile_id: str) -> Event:
    """One failed guard: its user stack where torch gives one (2.13, 2.14), else the line its comment
    names (2.9.1: `scale == 1  # if scale > 1:  # dir/prog.py:7 in scaled`, the path shortened against
    torch's folder: `placed_in` completes it), with the stack marked incomplete."""
    guard_text, _, stack = text.partition("\nUser stack trace:\n")
    guard = _COMPILE_ID.sub("", guard_text.split("  #", 1)[0]).strip() or guard_text.strip()
    event = Event(RECOMPILE, f"guard failed: {guard}", frames_of(stack), compile_id=compile_id, extra={"guard": guard})
    _, *comment = (guard_text.splitlines() or [""])[0].split("  # ")
    site = _GUARD_SITE.match(comment[-1].strip()) if comment and not event.frames else None
    if site is None or not _line(site["line"]):
        return event
    quoted = "  # ".join(comment[:-1]).strip()
    return replace(event, frames=(Frame(site["path"], _line(site["line"]), site["func"], quoted),), stack="incomplete")


def placed_in(event: Event, code: tuple[Frame, ...]) -> Event:
    """A recompile at the line its guard's comment names, in the compiled code's file when the
    comment's shortened path is the end of that file's (else as the comment names it). Torch 2.9
    shortens a long path by its first characters, mid-name (`ork/main/train.py` for
    `/work/main/train.py`): a shortened path that keeps a folder and ends the file's path is it."""
    if event.stack != "incomplete" or len(event.frames) != 1 or not code:
        return event
    frame, path = event.frames[0], code[0].path
    if path == frame.path or path.endswith("/" + frame.path) or ("/" in frame.path and path.endswith(frame.path)):
        return replace(event, frames=(replace(frame, path=path),))
    return event


def graph_break_text(message: str, compile_id: str, registry: dict[str, str]) -> Event:
    """A `graph_breaks` text-log message (the artifact's text less Dynamo's traceback; a repeated
    break gives only its site) as an event whose stack is marked incomplete."""
    return replace(graph_break(message, compile_id, registry), stack="incomplete")


def recompiles_text(message: str, compile_id: str) -> tuple[tuple[Frame, ...], Event | None]:
    """A `recompiles` text-log message: the compiled function's first line, and the recompile (the
    newest compile's failed guard, as `recompile_reasons`) with its stack marked incomplete."""
    lines = message.splitlines()
    header = _RECOMPILING.match(lines[0].strip()) if lines else None
    code = (Frame(header["path"], _line(header["line"]), header["func"]),) if header and _line(header["line"]) else ()
    reasons: list[list[str]] = []
    for line in lines[2:]:  # after "triggered by the following guard failure(s):", "    - " and a line
        text = line.removeprefix("    - ")
        if _COMPILE_ID.match(text) or not reasons:
            reasons.append([])
        reasons[-1].append(text)
    if not reasons:
        return code, None
    return code, replace(placed_in(_recompile("\n".join(reasons[0]), compile_id), code), stack="incomplete")


def user_code_frames(dynamo_error: str) -> tuple[Frame, ...]:
    """The user stack of a `dynamo_error` artifact (the failed compile's exception as Dynamo
    formats it): its "from user code:" block, from the compiled function's line to the failing one."""
    _, marker, rest = dynamo_error.partition("\nfrom user code:\n")
    if not marker:
        return ()
    return _reindented_frames(rest.split("\n\n", 1)[0])


def _reindented_frames(block: str) -> tuple[Frame, ...]:
    """The frames of a stack torch writes with its own indentation (a Dynamo error's user code,
    inductor's "Found from"), each `File` line read as a traceback's."""
    return frames_of(
        "\n".join("  " + line.lstrip() if line.lstrip().startswith("File ") else line for line in block.splitlines())
    )


def from_metrics(metrics: dict[str, object], compile_id: str, user_code: tuple[Frame, ...] = ()) -> list[Event]:
    """A compile's failure and its CUDA-graph skip, from its `compilation_metrics`; the failure at
    `user_code` (the compile's `dynamo_error` stack) when there is one, else at the frame the
    metrics name (the innermost alone: a library's line, with no line of the user's)."""
    events = []
    fail_type = metrics.get("fail_type")
    if fail_type:
        path, line = metrics.get("fail_user_frame_filename"), metrics.get("fail_user_frame_lineno")
        failing = (Frame(str(path), _line(line), ""),) if path and _line(line) else ()
        failed = user_code or code_frames(metrics) + failing
        fail_reason = str(metrics.get("fail_reason") or "")
        gb_type, words = _innermost_reason(fail_reason)  # Dynamo's reason blocks, when a break failed it
        urls = _GB_URL.findall(fail_reason)
        reason = f"{fail_type}: {words}".strip(": ")
        gb_id = f"GB{urls[-1]}" if urls else None
        events.append(Event(COMPILE_FAILURE, reason, failed, gb_type, gb_id, compile_id=compile_id))
    skip = metrics.get("cudagraph_skip_reason")
    if skip:
        event = cudagraph_skip(str(skip), compile_id)
        events.append(event if event.frames else replace(event, frames=code_frames(metrics)))
    return events


def cudagraph_skip(message: str, compile_id: str) -> Event:
    """Inductor's CUDA-graph skip message, at the user's line its "Found from" stack names (inductor
    writes `Found from :` or `Found from:`, its frames indented by three spaces or two)."""
    text, found = [*_FOUND_FROM.split(message, 1), ""][:2]
    return Event(CUDAGRAPH_SKIP, text.strip(), _reindented_frames(found), compile_id=compile_id)


def call_frames(metrics: dict[str, object]) -> tuple[Frame, ...]:
    """The frames that called a compile's code (its `stack_trace`, outermost first, without the
    compiled code's own first line, its last entry): where the user's call is when the compiled
    function is a library's or torch's."""
    entries = metrics.get("stack_trace")
    found = [_STACK_ENTRY.match(str(e)) for e in entries[:-1]] if isinstance(entries, list) else []
    return tuple(Frame(m["path"], _line(m["line"]), m["func"]) for m in found if m and _line(m["line"]))


def code_frames(metrics: dict[str, object]) -> tuple[Frame, ...]:
    """The compiled code's own first line: where an event with no user line of its own goes."""
    path, line = metrics.get("co_filename"), _line(metrics.get("co_firstlineno"))
    if not path or not isinstance(path, str) or not line:
        return ()
    return (Frame(path, line, str(metrics.get("co_name") or "")),)


def registry_by_type(registry: dict[str, list[dict[str, object]]]) -> dict[str, str]:
    """Torch's graph-break registry (`torch/_dynamo/graph_break_registry.json`) as break type → gb id."""
    found: dict[str, str] = {}
    for gb_id, entries in registry.items():
        for entry in entries if isinstance(entries, list) else ():
            gb_type = entry.get("Gb_type") if isinstance(entry, dict) else None
            if isinstance(gb_type, str):
                found.setdefault(gb_type, gb_id)
    return found
