"""The data every front shows: diagnostics, their related locations and (later) their fixes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .source import Range

GB_DOC_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"


class Applicability(str, enum.Enum):
    """How sure a fix is to keep behaviour: `safe` fixes apply by default, `unsafe` on request."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True)
class TextEdit:
    range: Range
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str  # what the fix does, short: a quick-fix menu shows it
    applicability: Applicability
    edits: tuple[TextEdit, ...] = ()
    hazards: tuple[str, ...] = ()  # what an unsafe fix may change, a clause each (the hover lists them)

    @property
    def hazard(self) -> str | None:
        """The hazards in one sentence, for the text output's notes and messages (None: safe)."""
        return "; ".join(self.hazards) or None

    @property
    def described(self) -> str:
        """The title and the hazards in one line, where one line must say both (Fix All's list of
        unsafe fixes, SARIF)."""
        return f"{self.title} (unsafe: {self.hazard})" if self.hazards else self.title


@dataclass(frozen=True)
class RelatedLocation:
    """Another place that explains a diagnostic, e.g. the compiled entry a callee is reached from;
    in another file when `path` is set."""

    range: Range
    message: str
    path: str | None = None
    # "compiled": why the code is compiled; "value": a step of why a value is a tensor; "resume":
    # where the same break makes Dynamo break again; "library": the break a call leads to, in code
    # outside the checked files
    kind: str = "compiled"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    range: Range
    reason_id: str | None = None
    related: tuple[RelatedLocation, ...] = ()
    fix: Fix | None = None
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def url(self) -> str | None:
        """Dynamo's own page for the break reason, when there is one."""
        return GB_DOC_URL.format(self.reason_id) if self.reason_id else None
