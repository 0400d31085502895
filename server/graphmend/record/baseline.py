"""A committed baseline of what a run may meet, for CI: `graphmend record --baseline FILE -- COMMAND`.

An event's identity in a baseline is what stays when code moves or runs with other values: its kind,
its gb id (or break type, or the guard without the values it compared: `guards.identity`), and for
the user's line and the library's line (the innermost frame, when it is not the user's) the file,
the function (a Dynamo resume function as the function it resumes: its name holds a line number)
and the text of the line. Line numbers are never compared. A file in an installed package is named
from its `site-packages` folder on, so that two environments agree. A baseline written by an older
graphmend is read the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import guards
from .runs import RecordedEvent, RecordedFrame, Run, placed

SCHEMA = 1


def _file(path: str, root: Path) -> str:
    parts = Path(path).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1 :])
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def _site(frame: RecordedFrame | None, root: Path) -> dict[str, str] | None:
    if frame is None:
        return None
    func = guards.resumed_function(frame.get("func", ""))
    return {"path": _file(frame["path"], root), "func": func, "text": frame.get("text", "")}


def identity(event: RecordedEvent, root: Path) -> dict[str, Any]:
    user, elsewhere = placed(event, root)
    what = event.gb_id or event.gb_type or (guards.identity(event.guard) if event.guard else event.reason)
    return {"kind": event.kind, "what": what, "user": _site(user, root), "site": _site(elsewhere, root)}


def _key(found: dict[str, Any]) -> str:
    """What two identities are compared on (a baseline's entry read as this graphmend writes it)."""
    what = found.get("what")
    if found.get("kind") == "recompile" and isinstance(what, str):
        what = guards.identity(what.removeprefix("guard failed: "))
    sites = {}
    for name in ("user", "site"):
        site = found.get(name)
        sites[name] = (
            {**site, "func": guards.resumed_function(str(site.get("func", "")))} if isinstance(site, dict) else None
        )
    return json.dumps({"kind": found.get("kind"), "what": what, **sites}, sort_keys=True)


def write_baseline(run: Run, root: Path, path: Path) -> int:
    """Write the run's events as the baseline at `path`; returns how many."""
    events = sorted({_key(identity(e, root)): identity(e, root) for e in run.events}.items())
    path.write_text(json.dumps({"schema": SCHEMA, "events": [e for _, e in events]}, indent=1) + "\n", "utf-8")
    return len(events)


def compare(run: Run, root: Path, path: Path) -> tuple[list[RecordedEvent], list[dict[str, Any]]]:
    """The run's events the baseline at `path` does not hold, and the baseline's events the run did
    not meet. Raises OSError or ValueError for a baseline that cannot be read."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not isinstance(raw.get("events"), list):
        raise ValueError("not a graphmend baseline (no `events` list)")
    known = {_key(e): e for e in raw["events"] if isinstance(e, dict) and {"kind", "what"} <= e.keys()}
    met = {_key(identity(e, root)) for e in run.events}
    new = [e for e in run.events if _key(identity(e, root)) not in known]
    gone = [e for key, e in known.items() if key not in met]
    return new, gone
