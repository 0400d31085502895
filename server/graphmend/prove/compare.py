"""What differs between two proof runs' observations (`probe`), process by process.

Processes are matched by rank and argv, in the order they started. In each, the text of stdout and
stderr, the log records and warnings (their lines read through the rewrite's line map), the
outputs of each compiled callable's calls, the gradients before and the parameters and buffers
after each optimizer step, and uncaught exceptions are compared in order. Tensors compare by their
bytes; when a run compiled with a backend that is not bitwise eager (inductor), floating values
compare within `torch.allclose`'s default tolerance, as graphmend's proofs do.
"""

from __future__ import annotations

import array
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

RTOL, ATOL = 1e-5, 1e-8  # torch.allclose's defaults: what the proofs in tests/ use
TOLERANCE = f"rtol={RTOL:g}, atol={ATOL:g} (torch.allclose's defaults)"

# What differs from run to run of any program, masked in text and log messages before they are
# compared: clock times and timestamps, durations and rates, addresses, UUIDs (torchrun's run id).
VOLATILE = (
    re.compile(r"\b[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ "),  # a glog prefix (time, thread id)
    re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?"),
    re.compile(r"\b\d{1,2}:\d\d:\d\d(?:\.\d+)?\b|\b\d+:\d\d<\d+:\d\d\b"),  # 12:04:52.95, tqdm's 00:01<00:02
    re.compile(r"\b0x[0-9a-fA-F]{6,}\b"),
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\s?(?:s|ms|us|µs|ns|min|it/s|s/it|samples/s|tokens/s)\b"),
    re.compile(r"((?:duration|_ms|elapsed|_time|seconds|timestamp)\"?\s*[:=]\s*)-?\d+(?:\.\d+)?(?:e-?\d+)?"),
)


def masked(text: str, masks: tuple[re.Pattern[str], ...] = ()) -> str:
    """`text` with what varies between any two runs (and the user's `--mask` patterns) replaced by `…`."""
    for pattern in (*VOLATILE, *masks):
        text = pattern.sub(lambda match: (match.group(1) or "" if match.re.groups else "") + "…", text)
    return text


@dataclass
class Process:
    """One process's observations."""

    folder: Path
    argv: list[str]
    rank: str | None
    pid: str = ""
    ended: bool = False  # it wrote its observations at exit
    texts: dict[str, str] = field(default_factory=dict)
    logs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    functions: dict[str, dict[str, int]] = field(default_factory=dict)
    served: list[str] = field(default_factory=list)  # the rewritten files it ran
    compile_text: list[str] = field(default_factory=list)  # what torch's compile loggers wrote
    probe_errors: list[str] = field(default_factory=list)  # parts of the observer that did not start
    seeds: dict[str, str] = field(default_factory=dict)
    exact: bool = True
    step_count: int = 0
    lines: list[tuple[str, int]] = field(default_factory=list)

    @property
    def observed_anything(self) -> bool:
        """Whether the process did anything a user sees: a helper process of torch's (inductor's
        compile workers, whose number is torch's choice) that did not is not matched."""
        return (
            bool(any(self.texts.values()) or self.logs or self.warnings or self.calls or self.steps or self.exceptions)
            or not self.ended
            or bool(self.probe_errors)
        )

    @property
    def name(self) -> str:
        command = " ".join(self.argv) or "python"
        return f"rank {self.rank} ({command})" if self.rank is not None else f"`{command}`"


def read_processes(folder: Path) -> list[Process]:
    """A run's processes, in the order they are matched: by rank and argv, then as they started."""
    found = []
    for file in folder.glob("observed-*.jsonl"):
        process = _read(file)
        if process is not None:
            found.append((file.stat().st_mtime_ns, process))
    found.sort(key=lambda pair: (pair[1].rank or "", pair[1].argv, pair[0]))
    return [process for _, process in found if process.observed_anything]


def _read(file: Path) -> Process | None:
    process: Process | None = None
    for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # cut by a crash
        if "process" in item:
            process = Process(
                file.parent,
                list(item["process"].get("argv", [])),
                item["process"].get("rank"),
                file.stem.rsplit("-", 1)[-1],
            )
        elif process is None:
            continue
        elif "text" in item:
            process.texts[item["text"]] = item.get("data", "")
        elif "log" in item:
            process.logs.append(item)
        elif "warning" in item:
            process.warnings.append(item)
        elif "call" in item:
            process.calls.append(item)
        elif "step" in item or "after_step" in item:
            process.steps.append(item)
        elif "exception" in item:
            process.exceptions.append(item)
        elif "functions" in item:
            process.functions, process.served = item["functions"], item.get("served", [])
        elif "seeds" in item:
            process.seeds, process.exact, process.step_count = item["seeds"], item.get("exact", True), item["steps"]
        elif "lines" in item:
            process.lines = [(path, line) for path, line in item["lines"]]
        elif "probe_error" in item:
            process.probe_errors.append(item["probe_error"])
        elif "compile_text" in item:
            process.compile_text = list(item["compile_text"])
        elif "end" in item:
            process.ended = True
    return process


@dataclass(frozen=True)
class Difference:
    """One thing the fixed run does not do as the original did."""

    process: str
    kind: str  # "stdout", "log", "call", "gradient", "parameter", "exception", "process", ...
    where: str  # "call 3 of Model (train.py)", "step 2", "line 14"
    detail: str

    def __str__(self) -> str:
        where = f", {self.where}" if self.where else ""
        return f"{self.kind} differs in {self.process}{where}: {self.detail}"


LineMaps = dict[str, list[int]]  # a rewritten file's real path → original line of each fixed line (1-based)


def differences(
    original: list[Process], fixed: list[Process], line_maps: LineMaps, masks: tuple[re.Pattern[str], ...] = ()
) -> list[Difference]:
    """Each kind's first difference in each matched process, and processes that do not match; text
    and messages are compared `masked`."""
    found: list[Difference] = []
    exact = all(p.exact for p in [*original, *fixed])
    if original or fixed:  # a run's process ids (torchrun's worker ids) are its own: masked too
        masks = (*masks, _pids(original + fixed))
    for index in range(max(len(original), len(fixed))):
        if index >= len(fixed):
            found.append(Difference(original[index].name, "process", "", "the fixed run did not start it"))
            continue
        if index >= len(original):
            found.append(Difference(fixed[index].name, "process", "", "only the fixed run started it"))
            continue
        found.extend(_process_differences(original[index], fixed[index], line_maps, exact, masks))
    return found


def _process_differences(
    a: Process, b: Process, line_maps: LineMaps, exact: bool, masks: tuple[re.Pattern[str], ...]
) -> Iterator[Difference]:
    name = a.name
    if (a.rank, a.argv) != (b.rank, b.argv):
        yield Difference(name, "process", "", f"the fixed run started {b.name} instead")
        return
    if a.ended != b.ended:
        yield Difference(name, "process", "", "it ended early in the " + ("fixed" if a.ended else "original") + " run")
    elif not a.ended:  # os._exit or a signal: what it saw last was never written, in either run
        yield Difference(name, "observer", "", "it ended before graphmend could write what it saw (os._exit, a signal)")
    for error in [*a.probe_errors, *b.probe_errors]:  # unobserved is not unchanged: never proved
        yield Difference(name, "observer", "", f"graphmend could not observe it fully ({error})")
    # what the program computes first (exceptions, outputs, training), then what it says
    if [(e["exception"], masked(e["message"], masks)) for e in a.exceptions] != [
        (e["exception"], masked(unshifted(e["message"], line_maps), masks)) for e in b.exceptions
    ]:
        before = "; ".join(f"{e['exception']}: {e['message']}" for e in a.exceptions) or "none"
        after = "; ".join(f"{e['exception']}: {e['message']}" for e in b.exceptions) or "none"
        yield Difference(name, "exception", "uncaught", f"{before} before, {after} after")
    yield from _call_differences(a, b, exact, line_maps)
    yield from _step_differences(a, b, exact)
    for kind, first, second in (("log", a.logs, b.logs), ("warning", a.warnings, b.warnings)):
        listed = _listed_difference(
            kind, [_masked(i, masks) for i in first], [_masked(_mapped(i, line_maps), masks, line_maps) for i in second]
        )
        if listed is not None:
            yield Difference(name, kind, *listed)
    for stream in ("stdout", "stderr"):
        text = _text_difference(
            masked(unquoted(a.texts.get(stream, ""), line_maps), masks),
            masked(unquoted(unshifted(b.texts.get(stream, ""), line_maps), line_maps), masks),
        )
        if text is not None:
            yield Difference(name, stream, *text)


def _text_difference(first: str, second: str) -> tuple[str, str] | None:
    if first == second:
        return None
    a, b = first.splitlines(), second.splitlines()
    at = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    before = _short(a[at]) if at < len(a) else "(no more lines)"
    after = _short(b[at]) if at < len(b) else "(no more lines)"
    return f"line {at + 1}", f"{before!s} before, {after!s} after"


def _short(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def unshifted(text: str, line_maps: LineMaps) -> str:
    """A fixed run's text with the lines it names in rewritten files (`model.py:27:`, `File
    "model.py", line 27`) in the original's numbers: a fix that adds a helper above moves them."""
    for path, lines in line_maps.items():
        pattern = re.compile("(" + re.escape(path) + r'(?::|", line ))(\d+)')
        text = pattern.sub(partial(_in_original, lines), text)
    return text


def _in_original(lines: list[int], match: re.Match[str]) -> str:
    line = int(match.group(2))
    return f"{match.group(1)}{lines[line - 1] if 0 < line <= len(lines) else line}"


def unquoted(text: str, paths: Iterable[str]) -> str:
    """`text` without the source lines a warning or a traceback quotes from the rewritten files
    (`paths`): they quote the rewrite, which is the point of the fix, not a change of behaviour."""
    for path in paths:
        quoted = re.compile("(" + re.escape(path) + r'(?::\d+:|", line \d+)[^\n]*\n[ \t]+)[^\n]*')
        text = quoted.sub(lambda m: m.group(1) + "…", text)
    return text


def _pids(processes: list[Process]) -> re.Pattern[str]:
    pids = sorted({p.pid for p in processes if p.pid.isdigit() and len(p.pid) >= 3}, key=len, reverse=True)
    return re.compile(r"(?<![\d.])(?:" + "|".join(pids) + r")(?![\d.])") if pids else re.compile(r"(?!)")


def _masked(
    item: dict[str, Any], masks: tuple[re.Pattern[str], ...], line_maps: LineMaps | None = None
) -> dict[str, Any]:
    return {**item, "message": masked(unshifted(str(item.get("message")), line_maps or {}), masks)}


def _mapped(item: dict[str, Any], line_maps: LineMaps) -> dict[str, Any]:
    """A fixed run's record with its line in the original file's numbers."""
    from os.path import realpath

    lines = line_maps.get(realpath(str(item.get("path", ""))))
    line = item.get("line")
    if lines is None or not isinstance(line, int) or not 0 < line <= len(lines):
        return item
    return {**item, "line": lines[line - 1]}


def _listed_difference(kind: str, first: list[dict[str, Any]], second: list[dict[str, Any]]) -> tuple[str, str] | None:
    def key(item: dict[str, Any]) -> tuple[Any, ...]:
        return (item.get(kind), item.get("level"), item.get("message"), item.get("path"), item.get("line"))

    if [key(i) for i in first] == [key(i) for i in second]:
        return None
    at = next((n for n, (x, y) in enumerate(zip(first, second)) if key(x) != key(y)), min(len(first), len(second)))
    before = _record(first[at]) if at < len(first) else "none"
    after = _record(second[at]) if at < len(second) else "none"
    return f"{kind} {at + 1} of {len(first)}", f"{before} before, {after} after"


def _record(item: dict[str, Any]) -> str:
    level = f"{item['level']} " if item.get("level") else ""
    return f"{level}{_short(str(item.get('message')), 80)} at {Path(str(item.get('path'))).name}:{item.get('line')}"


def _call_differences(a: Process, b: Process, exact: bool, line_maps: LineMaps) -> Iterator[Difference]:
    by_name_a, by_name_b = _by_callable(a.calls, {}), _by_callable(b.calls, line_maps)
    for name in sorted(set(by_name_a) | set(by_name_b)):
        first, second = by_name_a.get(name, []), by_name_b.get(name, [])
        label = f"{name[0]} ({Path(name[1]).name}:{name[2]})" if name[2] is not None else f"{name[0]} ({name[1]})"
        for number, (x, y) in enumerate(zip(first, second), start=1):
            found = _value_difference(x.get("out"), y.get("out"), (a.folder, b.folder), exact, "output")
            if found is not None:
                yield Difference(a.name, "call", f"call {number} of {label}", found)
                break
        else:
            if len(first) != len(second):
                yield Difference(a.name, "call", label, f"called {len(first)} times before, {len(second)} after")


def _by_callable(
    calls: list[dict[str, Any]], line_maps: LineMaps
) -> dict[tuple[str, str, int | None], list[dict[str, Any]]]:
    """Calls by the callable they call: its name, file and line (a rewritten file's, in the original's numbers)."""
    named: dict[tuple[str, str, int | None], list[dict[str, Any]]] = {}
    for call in calls:
        where = _mapped({"path": call.get("path", ""), "line": call.get("line")}, line_maps)
        named.setdefault((call["call"], str(call.get("path", "")), where["line"]), []).append(call)
    return named


def _step_differences(a: Process, b: Process, exact: bool) -> Iterator[Difference]:
    for x, y in zip(a.steps, b.steps):
        kind, values = ("gradient", "grads") if "grads" in x else ("parameter", "params")
        step = x.get("step") or x.get("after_step")
        for what, section in ((kind, values), ("buffer", "buffers")):
            first, second = x.get(section) or {}, y.get(section) or {}
            for name in sorted(set(first) | set(second)):
                found = _value_difference(first.get(name), second.get(name), (a.folder, b.folder), exact, name)
                if found is not None:
                    when = "before" if kind == "gradient" else "after"
                    yield Difference(a.name, what, f"{when} optimizer step {step}", found)
                    return
    if a.step_count != b.step_count:
        yield Difference(a.name, "parameter", "optimizer steps", f"{a.step_count} steps before, {b.step_count} after")


def _value_difference(first: Any, second: Any, folders: tuple[Path, Path], exact: bool, path: str) -> str | None:
    """Where two digests (`probe.Probe.digest`) differ, in words; None when they do not."""
    if (first is None) != (second is None):
        return f"{path}: {_described(first)} before, {_described(second)} after"
    if isinstance(first, dict) and "dtype" in first:
        if not (isinstance(second, dict) and "dtype" in second):
            return f"{path}: a tensor before, {_kind(second)} after"
        for key in ("dtype", "shape", "requires_grad", "is_input"):
            if first.get(key) != second.get(key):
                label = {"is_input": "is the input itself"}.get(key, key)
                return f"{path}: {label} {first.get(key)} before, {second.get(key)} after"
        if first.get("sha") == second.get("sha") and first.get("sha") is not None:
            return None
        if not exact and "values" in first and "values" in second:
            worst = _worst(_values(folders[0], first), _values(folders[1], second))
            return (
                None if worst is None else f"{path}: values differ beyond {TOLERANCE} (largest difference {worst:.3g})"
            )
        return f"{path}: values differ"
    if isinstance(first, dict) and isinstance(second, dict):
        if first.get("type") != second.get("type"):
            return f"{path}: {first.get('type')} before, {second.get('type')} after"
        if "items" in first:
            if len(first["items"]) != len(second.get("items", [])):
                return f"{path}: {len(first['items'])} items before, {len(second.get('items', []))} after"
            for n, (x, y) in enumerate(zip(first["items"], second["items"])):
                found = _value_difference(x, y, folders, exact, f"{path}[{n}]")
                if found is not None:
                    return found
        if "keys" in first:
            if list(first["keys"]) != list(second.get("keys", {})):
                return f"{path}: keys {list(first['keys'])} before, {list(second.get('keys', {}))} after"
            for key, x in first["keys"].items():
                found = _value_difference(x, second["keys"][key], folders, exact, f"{path}.{key}")
                if found is not None:
                    return found
        return None
    return None if first == second else f"{path}: {first!r} before, {second!r} after"


def _described(value: Any) -> str:
    if isinstance(value, dict) and "dtype" in value:
        return f"a {value['dtype']} tensor of shape {value['shape']}"
    return "None" if value is None else _kind(value)


def _kind(value: Any) -> str:
    return str(value.get("type")) if isinstance(value, dict) else type(value).__name__


def _values(folder: Path, digest: dict[str, Any]) -> array.array:
    file, offset = digest["values"]
    count = math.prod(digest["shape"]) if digest["shape"] else 1
    values = array.array("d")
    with open(folder / file, "rb") as stream:
        stream.seek(offset)
        values.fromfile(stream, count)
    return values


def _worst(first: array.array, second: array.array) -> float | None:
    """The largest difference past tolerance (None: all within), as torch.allclose with equal_nan."""
    worst = None
    for x, y in zip(first, second):
        if math.isnan(x) and math.isnan(y):
            continue
        if x == y:
            continue
        gap = abs(x - y)
        if not gap <= ATOL + RTOL * abs(y):
            worst = gap if worst is None or gap > worst else worst
    return worst
