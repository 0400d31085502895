"""The rule interface: a stable code, a message, Dynamo's reason, and a check over one node kind."""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..diagnostics import Fix, RelatedLocation, Severity
from ..fixes.base import FixContext, Refusal
from ..inference import FunctionAnalysis
from ..semantics import walk
from ..source import SourceText

if TYPE_CHECKING:
    from ..recompiles import Program, Values
    from ..record.runs import RecordedEvent

BREAKS_THE_GRAPH = "Why it breaks the graph"


class Family(str, enum.Enum):
    """What a rule's findings are; the first digit of its (stable) code says which, as in Ruff."""

    CONTROL_FLOW = "control-flow"  # GM1xx: a branch on a tensor's value
    SIDE_EFFECT = "side-effect"  # GM2xx: print, logging, warnings
    NOT_REWRITABLE = "not-fixable-by-rewrite"  # GM3xx: breaks no source rewrite removes
    CUDA_GRAPHS = "cuda-graphs-or-recompilation"  # GM4xx: not a graph break
    RECORDED = "recorded-run"  # GM5xx: what a recorded run met where no static rule reports
    RECOMPILES = "recompile"  # GM6xx: a guard the program will fail on a later call

    @property
    def about_a_value(self) -> bool:
        """Findings about a tensor's value (GM1xx, GM3xx): their related information says why it is one."""
        return self in (Family.CONTROL_FLOW, Family.NOT_REWRITABLE)


_FAMILY_BY_DIGIT = {
    "1": Family.CONTROL_FLOW,
    "2": Family.SIDE_EFFECT,
    "3": Family.NOT_REWRITABLE,
    "4": Family.CUDA_GRAPHS,
    "5": Family.RECORDED,
    "6": Family.RECOMPILES,
}


@dataclass(frozen=True)
class RuleDocs:
    """A rule's documentation as data, so that every front (hover, SARIF, `graphmend rule`,
    docs/rules/) renders the same text without parsing prose. Prose is one line; `example` is code."""

    what: str  # what it flags ("What it does")
    why: str  # why Dynamo breaks there, or what it costs otherwise (`why_title` says which)
    example: str  # code it flags, dedented, lines joined by "\n"
    action: str  # what the user can do by hand, one imperative sentence ("What to do"; the hover without a fix)
    fix: str  # the fix and how safe it is ("Fix and its safety")
    why_title: str = BREAKS_THE_GRAPH  # GM4xx: not a graph break, so another heading


class Rule:
    """One kind of graph break (GM4xx: of what keeps a graph out of CUDA graphs or recompiles it),
    documented in `docs`."""

    code: ClassVar[str]
    family: ClassVar[Family]  # from the code, once for every rule (`__init_subclass__`)
    name: ClassVar[str]
    message: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    reason: ClassVar[str]  # Dynamo's own "Graph Break Reason" text
    reason_id: ClassVar[str | None]  # its gbNNNN page (None: not a graph break)
    also_reported_as: ClassVar[tuple[str, ...]] = ()  # other gb pages `reason_id_for` gives (docs/coverage.md)
    fixable: ClassVar[bool] = True  # whether a rewrite in this product can remove it
    # GM4xx: not a graph break but what keeps a graph out of CUDA graphs; checked only where the
    # code is compiled for them (`FixContext.cuda_graph_scope`)
    cuda_graphs: ClassVar[bool] = False
    # Whether its findings are about a tensor's value (related information then says why it is one):
    # by family (GM1xx, GM3xx), unless a rule's break does not come from a value (a `class` statement).
    about_a_value: ClassVar[bool]
    node_types: ClassVar[tuple[type[ast.AST], ...]]
    docs: ClassVar[RuleDocs]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in vars(cls):  # not an abstract kind of rule (`RecordedRule`)
            cls.family = _FAMILY_BY_DIGIT[cls.code[2]]
            if "about_a_value" not in vars(cls):
                cls.about_a_value = cls.family.about_a_value

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        """Return the node to report (its range is the diagnostic's), or None."""
        raise NotImplementedError

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        """The rewrite that removes this break, a refusal that says why there is none, or None
        for rules no rewrite applies to. Computed with the diagnostic, reused by every front."""
        return None

    @classmethod
    def reason_ids(cls) -> tuple[str, ...]:
        """Every gb page this rule's diagnostics link, the registry types it covers."""
        return (cls.reason_id, *cls.also_reported_as) if cls.reason_id is not None else cls.also_reported_as

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str | None:
        """Dynamo's gb page for this site; rules whose sites Dynamo words differently override it."""
        return self.reason_id

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        """The message for this site; rules whose sites Dynamo words differently override it."""
        return self.message

    def related_for(
        self, reported: ast.AST, analysis: FunctionAnalysis, source: SourceText
    ) -> tuple[RelatedLocation, ...]:
        """Other places of the file that cause this break (kind "cause"), for rules that can point at one."""
        return ()


class RecordedRule(Rule):
    """A rule whose findings come from a recorded run (`graphmend record`, GM5xx), never from the
    source alone: each reports one kind of event the run met at a project line no static rule
    reports (`recorded.py`), with Dynamo's own words."""

    node_types = ()
    reason = "the recorded run's own words, carried by each finding"
    reason_id = None
    fixable = False
    event_kind: ClassVar[str]  # the `record.trace` event kind it reports

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        return None  # nothing in the source decides it

    @classmethod
    def message_for_event(cls, event: RecordedEvent) -> str:
        """The one sentence for this event: the rule's, with what Dynamo named."""
        named = event.gb_type or event.reason.partition(":")[0]
        return f"{cls.message}: {named}" if named else cls.message

    @classmethod
    def action_for_event(cls, event: RecordedEvent) -> str | None:
        """What to do about this event when the rule can say (the hover leads with it), else None."""
        return None

    @classmethod
    def severity_for(cls, events: list[RecordedEvent]) -> Severity:
        """The severity of one finding for these events (one line, one message)."""
        return cls.severity


@dataclass(frozen=True)
class Prediction:
    """A recompile a program will meet: the node at whose line Dynamo records it (where the guard is
    made: the read of the value, or the compiled function's `def` for a guard on the whole call), the
    guard in Dynamo's words, how often it fails, and the lines that make the value change."""

    node: ast.AST
    message: str
    guard: str
    how_often: str
    causes: tuple[tuple[ast.AST, str], ...]
    severity: Severity = Severity.INFORMATION  # WARNING: it recompiles past `recompile_limit`
    entry: str | None = None
    fix: PredictedFix | None = None
    no_fix: str | None = None  # why there is no fix, where one was looked for


@dataclass(frozen=True)
class PredictedFix:
    """A recompile rule's rewrite: each node's text wrapped by its template (`torch.tensor({})`)."""

    title: str
    wraps: tuple[tuple[ast.AST, str], ...]
    hazards: tuple[str, ...] = ()


class ProgramRule(Rule):
    """A rule over the whole file as a program (GM6xx): what changes between the calls of compiled
    code, read at the calls, predicted at the line the recompile will be recorded at."""

    node_types = ()
    reason = "guard failure on a later call (a recompile)"
    reason_id = None
    fixable = False
    # The kinds of failed guard (`record.guards.kind_of`) a recorded recompile at a finding's line
    # must have to confirm it: another kind at that line is a recompile the rule did not predict (GM502).
    confirmed_by: ClassVar[frozenset[str]]

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        return None  # decided over the program, in `predict`

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        raise NotImplementedError


def is_raise_guard(node: ast.If, analysis: FunctionAnalysis) -> bool:
    """`if cond: raise ...` (or `torch._assert(False, msg)`), possibly after assignments that only
    prepare the message: an input check, not a computation to predicate."""
    if node.orelse or not node.body:
        return False
    *preparation, stmt = node.body
    if not analysis.ends_in_error([stmt]):
        return False  # the common case, decided before any walk
    targets = [
        t for s in preparation for t in (s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)])
    ]
    if any(not isinstance(s, (ast.Assign, ast.AnnAssign)) or getattr(s, "value", None) is None for s in preparation):
        return False
    if not all(isinstance(t, ast.Name) for t in targets):
        return False
    prepared = {t.id for t in targets}  # type: ignore[union-attr]
    inside = {id(m) for b in node.body for m in walk(b)}
    if (
        prepared
        and analysis.function is not None
        and any(
            isinstance(n, ast.Name) and n.id in prepared and isinstance(n.ctx, ast.Load) and id(n) not in inside
            for n in walk(analysis.function.node)
        )
    ):
        return False  # a prepared name is read after the check: it is not only the message
    return True
