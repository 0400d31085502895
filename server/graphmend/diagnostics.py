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
    title: str  # an unsafe fix's ends in "(unsafe: <what may change>)"
    applicability: Applicability
    edits: tuple[TextEdit, ...] = ()

    @property
    def short_title(self) -> str:
        """The title without its hazard: what a quick-fix menu shows."""
        return self.title.split(_HAZARD, 1)[0]

    @property
    def hazard(self) -> str | None:
        """What an unsafe fix may change (its title's "(unsafe: ...)"), for the hover and notes."""
        head, found, rest = self.title.partition(_HAZARD)
        return rest.removesuffix(")") if found else None


_HAZARD = " (unsafe: "


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
