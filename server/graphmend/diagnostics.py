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
    # The edits write the line they are on (an in-graph message's record): right only where it was computed.
    names_its_line: bool = False

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
    # where the same break makes Dynamo break again; "recorded": a line a recorded run met the event
    # at, in code outside the checked files (a library's); "library": the break a call leads to, in code
    # outside the checked files; "cause": what makes this line break (the `disable`d function called)
    kind: str = "compiled"


@dataclass(frozen=True)
class LibraryCall:
    """Where a break reported at the user's call really is: a file outside the checked ones."""

    path: str
    line: int  # 0-based
    callee: str  # the function the user's call runs, as its module names it
    via: tuple[str, ...] = ()  # the functions after it on the way to the break


@dataclass(frozen=True)
class RunSeen:
    """A finding a recorded run confirmed: Dynamo met it there (`graphmend record`)."""

    count: int  # how many times the run met it (events of one kind)
    run: str  # the run's folder name
    recorded_at: float  # when the run ended (seconds since the epoch)
    kind: str = "graph_break"  # what it counts: graph_break, recompile, compile_failure, cudagraph_skip

    def to_json(self) -> dict[str, Any]:
        """Its form in JSON: the CLI's `run` and the LSP diagnostic's `data.run`."""
        return {"count": self.count, "run": self.run, "recorded_at": self.recorded_at, "kind": self.kind}


@dataclass(frozen=True)
class ProofSeen:
    """A fix's verdict on the user's run, as a proof record keeps it (`graphmend fix --prove`,
    `proof_records`)."""

    verdict: str  # "proved", "differs" or "not exercised"
    command: str
    processes: int
    steps: int  # optimizer steps
    calls: int  # calls of compiled callables
    ended: float  # when the proof ended (seconds since the epoch)
    differences: tuple[str, ...]  # what differed (a fix that differs)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ProofSeen:
        return cls(**{**raw, "differences": tuple(raw["differences"])})

    def to_json(self) -> dict[str, Any]:
        """Its form in JSON: the CLI's `proof` and the LSP diagnostic's `data.proof`."""
        return {**vars(self), "differences": list(self.differences)}


@dataclass(frozen=True)
class FindingData:
    """What qualifies a finding beyond its one-sentence message: written by the checker (and for
    breaks in other files by `project.library_calls`, for notebooks by the cell mapping), read by
    the text, JSON and SARIF outputs, the hover and the code actions; `to_json` is its form in an
    LSP diagnostic's `data`."""

    rule: str | None = None  # the rule's name
    entry: str | None = None  # the compiled entry the finding's function is reached from (qualname)
    nested: str | None = None  # set when the function runs inlined into another compiled frame
    cuda_graphs: str | None = None  # why CUDA graphs are recorded where it is
    only_when: tuple[str, ...] = ()  # the conditions it breaks under; () = every call
    library: LibraryCall | None = None  # the break is in a file outside the checked ones
    no_fix: str | None = None  # why there is no automatic fix
    action: str | None = None  # what to do instead, when there is no fix
    off_by_default: str | None = None  # the switch, false by default, without which it is never met
    run: RunSeen | None = None  # the newest recorded run met it
    proof: ProofSeen | None = None  # its fix's verdict on the user's run (`graphmend fix --prove`)
    dynamo: str | None = None  # a recorded run's finding (GM5xx): Dynamo's words for what it met
    guard: str | None = None  # a predicted recompile (GM6xx): the guard Dynamo installs, in its words
    how_often: str | None = None  # ... and how often the program fails it
    cell: int | None = None  # a notebook's finding: its cell's 1-based number
    notebook_index: int | None = None  # ... and its place in the notebook module's diagnostics

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FindingData:
        """The data `to_json` (or `dataclasses.asdict`) wrote."""
        library = raw.get("library")
        return cls(
            **{
                name: raw.get(name)
                for name in (
                    "rule",
                    "entry",
                    "nested",
                    "cuda_graphs",
                    "no_fix",
                    "action",
                    "dynamo",
                    "guard",
                    "how_often",
                )
            },
            only_when=tuple(raw.get("only_when") or ()),
            library=LibraryCall(library["path"], library["line"], library["callee"], tuple(library.get("via", ())))
            if library
            else None,
            off_by_default=raw.get("off_by_default"),
            run=RunSeen(run["count"], run["run"], run["recorded_at"], run.get("kind", "graph_break"))
            if (run := raw.get("run"))
            else None,
            proof=ProofSeen.from_json(proof) if (proof := raw.get("proof")) else None,
            cell=raw.get("cell"),
            notebook_index=raw.get("notebook_index"),
        )

    def to_json(self) -> dict[str, Any]:
        """The fields that are set, as JSON (field names as keys)."""
        found: dict[str, Any] = {}
        for name, value in vars(self).items():
            if value is None or value == ():
                continue
            if isinstance(value, LibraryCall):
                value = {"path": value.path, "line": value.line, "callee": value.callee, "via": list(value.via)}
            elif isinstance(value, (RunSeen, ProofSeen)):
                value = value.to_json()
            found[name] = list(value) if isinstance(value, tuple) else value
        return found


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    range: Range
    reason_id: str | None = None
    related: tuple[RelatedLocation, ...] = ()
    fix: Fix | None = None
    data: FindingData = field(default_factory=FindingData, compare=False, hash=False)

    @property
    def url(self) -> str | None:
        """Dynamo's own page for the break reason, when there is one."""
        return GB_DOC_URL.format(self.reason_id) if self.reason_id else None
