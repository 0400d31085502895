"""How a recorded run is written out (`graphmend record`): the summary of what it met at the user's
lines, and its events in the output formats (`text`, `github`, `json`, `sarif`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import __version__
from .diagnostics import GB_DOC_URL
from .record.runs import RecordedEvent, RecordedFrame, Run, placed
from .reporting import INFORMATION_URI, SARIF_SCHEMA, display_path, plural, uri


def events(found: list[RecordedEvent], root: Path, output_format: str, prefix: str = "") -> str:
    """Events for standard output: a line each at the user's line (text), GitHub annotations, JSON
    (a list, `event_json`) or SARIF."""
    if output_format == "json":
        return json.dumps([event_json(e, root) for e in found], indent=2)
    if output_format == "sarif":
        return sarif(found, root)
    lines = []
    for event in found:
        user, elsewhere = placed(event, root)
        where = user or elsewhere
        text = prefix + _words(event)
        if output_format == "github" and where is not None:
            lines.append(
                f"::error file={_display(where['path'], root)},line={where['line']},title=graphmend record::{text}"
            )
        else:
            lines.append(f"{_location(where, root)}: {text}")
    return "\n".join(lines)


def summary(run: Run, root: Path) -> list[str]:
    """What the run met at the user's lines (the library's or torch's line below), one entry per
    place and reason (chains that differ above the user's line are one entry), the most frequent
    first, then where the run is kept."""
    entries: dict[tuple[str, ...], int] = {}
    for event in run.events:
        user, elsewhere = placed(event, root)
        below = ""
        if user is not None and elsewhere is not None:
            below = f"  at {_location(elsewhere, root)}  {elsewhere['text']}".rstrip()
        key = (event.kind, f"{_location(user or elsewhere, root)}: {_words(event)}", below)
        entries[key] = entries.get(key, 0) + event.count
    lines = []
    for (_, text, below), count in sorted(entries.items(), key=lambda item: (item[0][0] != "graph_break", -item[1])):
        lines.append(f"{text} ({plural(count, 'time')})" if count > 1 else text)
        if below:
            lines.append(below)
    kinds: dict[str, int] = {}
    for kind, _, _ in entries:
        kinds[kind] = kinds.get(kind, 0) + 1
    counted = ", ".join(plural(n, kind.replace("_", " ")) for kind, n in kinds.items()) or "nothing"
    torch = f", torch {run.torch}" if run.torch else ""
    lines.append(f"graphmend: recorded {counted}{torch}: {_display(str(run.path), root)}")
    if not run.headers:
        lines.append(
            "graphmend: note: no Python process of the command was recorded (did it run Python? "
            "`python -S` and `python -I` skip the recorder)"
        )
    return lines


def _words(event: RecordedEvent) -> str:
    """ "graph break: GB0170 Data-dependent branching: ...": an event's kind, gb id and Dynamo's words."""
    return f"{event.kind.replace('_', ' ')}: {event.gb_id + ' ' if event.gb_id else ''}{event.reason}"


def _location(frame: RecordedFrame | None, root: Path) -> str:
    return f"{_display(frame['path'], root)}:{frame['line']}" if frame is not None else "(no line)"


def _display(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return path


_RUN_KINDS = {
    "graph_break": "Dynamo broke the graph here in a recorded run",
    "recompile": "a guard failed and the code was compiled again in a recorded run",
    "compile_failure": "compiling failed here in a recorded run",
    "cudagraph_skip": "CUDA graphs were skipped in a recorded run",
}


def event_json(event: RecordedEvent, root: Path) -> dict[str, Any]:
    """A recorded event as JSON: where the user acts (their line), where it happened, and Dynamo's words."""
    user, elsewhere = placed(event, root)
    where = user or elsewhere

    def site(frame: RecordedFrame | None) -> dict[str, Any] | None:
        if frame is None:
            return None
        return {
            "path": display_path(frame["path"]),
            "line": frame["line"],
            "func": frame["func"],
            "text": frame["text"],
        }

    return {
        "kind": event.kind,
        "gb_id": event.gb_id,
        "reason": event.reason,
        "count": event.count,
        "location": site(where),
        "library": site(elsewhere) if user is not None else None,
        "url": GB_DOC_URL.format(event.gb_id.lower()) if event.gb_id else None,
        "id": event.id,
    }


def sarif(found: list[RecordedEvent], root: Path) -> str:
    """SARIF 2.1.0 of a run's events (`graphmend record`): one result each at the user's line, the
    library's line as a related location; rules are the four kinds of event."""
    rules = [{"id": kind, "shortDescription": {"text": text}} for kind, text in _RUN_KINDS.items()]
    results = []
    for event in found:
        user, elsewhere = placed(event, root)
        where = user or elsewhere
        if where is None:
            continue
        result: dict[str, Any] = {
            "ruleId": event.kind,
            "ruleIndex": list(_RUN_KINDS).index(event.kind),
            "level": "error" if event.kind == "compile_failure" else "warning",
            "message": {"text": f"{event.gb_id + ' ' if event.gb_id else ''}{event.reason}"},
            "locations": [_site_location(where, root)],
            "properties": {"count": event.count, **({"gbId": event.gb_id} if event.gb_id else {})},
        }
        if user is not None and elsewhere is not None:
            result["relatedLocations"] = [{"id": 0, **_site_location(elsewhere, root)}]
        results.append(result)
    driver = {"name": "graphmend record", "version": __version__, "informationUri": INFORMATION_URI, "rules": rules}
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}},
        "results": results,
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)


def _site_location(site: RecordedFrame, root: Path) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": uri(Path(site["path"]), root), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": site["line"]},
        }
    }
