"""Where a recompile goes when torch gives no user stack for it: the line the same guard of the
same code was placed at before (torch 2.13 gives a guard's stack the first time it fails, not
again), the line its guard's comment names (torch 2.9), else the compiled function's `def`."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace

from . import trace
from .trace import Event, Frame

_GUARD_VALUE = re.compile(r"==\s*\S+$")  # a guard's value: `self.p == 0.4` and `self.p == 0.5` are one guard


class Placing:
    """The places recompiles of one process were given, kept to place the next ones alike."""

    def __init__(self, allowed: Callable[[str], bool], lines: Callable[[str], list[str] | None]) -> None:
        self.allowed = allowed  # whether a file's lines may be read (`log.Sources.allowed`)
        self.lines = lines  # a file's lines (`log.Sources.lines`)
        # (compiled code, a guard less its value) → where it was placed
        self._guard_sites: dict[tuple[tuple[Frame, ...], str], tuple[Frame, ...]] = {}

    def like_before(self, event: Event, code: tuple[Frame, ...]) -> Event:
        """A recompile where its user stack says; one without (torch 2.13 gives the stack of a guard
        the first time it fails, not again) where the same guard of the same code was placed before
        (`self.p == 0.4` where `self.p == 0.5` was), else `_placed`."""
        key = (code, _guard_shape(event))
        if event.frames and event.stack == "complete":
            self._guard_sites[key] = event.frames
            return event
        known = self._guard_sites.get(key)
        if known is None and not code:  # metrics without the code (the compile that hit the limit)
            return self.without_metrics(event)
        placed = replace(event, frames=known) if known is not None else self._placed(event, code)
        if placed.frames and placed.frames != tuple(self._at_def(frame) for frame in code):
            self._guard_sites.setdefault(key, placed.frames)  # placed by its guard's comment (torch 2.9)
        return placed

    def without_metrics(self, event: Event) -> Event:
        """A recompile whose compile never came (the one that hits `recompile_limit`: no compile
        follows it), where the same guard was placed before in any code, else as it is."""
        shape = _guard_shape(event)
        known = next((frames for (_, guard), frames in self._guard_sites.items() if guard == shape), None)
        if known is not None:
            return replace(event, frames=known, stack="incomplete")
        return event if event.frames else replace(event, stack="incomplete")

    def _placed(self, event: Event, code: tuple[Frame, ...]) -> Event:
        """A recompile with no user stack: at the line its guard's comment names (torch 2.9: in the
        compiled code's file; 2.13: often torch's own line, its path shortened against torch's
        folder, shown below the compiled function's `def`), else at that `def` (a shape guard
        belongs to the whole function). A comment's file that is not there is dropped: no event
        names a missing file."""
        at_def = tuple(self._at_def(frame) for frame in code)
        if event.frames:
            placed = trace.placed_in(event, code)
            frame = placed.frames[0]
            path = self._existing(frame.path)
            if path is not None and any(f.path == path for f in code):
                return replace(placed, frames=(replace(frame, path=path),))
            if path is not None:
                return replace(placed, frames=(*at_def, replace(frame, path=path)))
        return replace(event, frames=at_def, stack="incomplete")

    def _existing(self, path: str) -> str | None:
        """A guard comment's file as a path on disk: under torch's folder (torch shortens its own
        paths) or as named; None when neither is a file the run's frames may be read from."""
        torch = sys.modules.get("torch")
        folder = os.path.dirname(getattr(torch, "__file__", None) or "") or None
        for candidate in (*([os.path.join(folder, path)] if folder and not os.path.isabs(path) else []), path):
            if self.allowed(candidate):
                return os.path.normpath(os.path.abspath(candidate))
        return None

    def _at_def(self, frame: Frame) -> Frame:
        """A compiled function's first line (`co_firstlineno`, its first decorator's) moved to its
        `def`, with that line's text: where a guard of the whole function is shown."""
        lines = self.lines(frame.path)
        if lines is None or not 0 < frame.line <= len(lines):
            return frame
        if not lines[frame.line - 1].lstrip().startswith(("@", "def ", "async ")):
            return frame
        for number in range(frame.line - 1, min(len(lines), frame.line + 20)):  # past multi-line decorators
            text = lines[number].strip()
            if text.startswith(("def ", "async def ")):
                return replace(frame, line=number + 1, text=text)
        return frame


def _guard_shape(event: Event) -> str:
    """A recompile's guard less its value: the same guard failing at another value."""
    return _GUARD_VALUE.sub("== …", event.extra.get("guard", event.reason))
