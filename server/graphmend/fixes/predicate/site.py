"""The `if` being rewritten, and what every step of the rewrite reads or adds to."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...diagnostics import TextEdit
from ...inference import FunctionAnalysis
from ...kinds import Env
from ...semantics import ClassInfo, FunctionInfo
from ..base import FixContext


@dataclass
class Site:
    """One `if` chain inside its function. The steps share its surroundings, and collect here the
    reasons the fix is unsafe and the edits that add helpers elsewhere in the file."""

    node: ast.If
    analysis: FunctionAnalysis
    ctx: FixContext
    function: FunctionInfo
    torch: str  # the name torch is written with
    before: Env  # the kinds of names before the `if`
    following: list[ast.stmt]  # the statements after an `if` whose branches all return: its `else`
    floating: set[str]  # tensors the condition's Python part proves floating point
    # every tensor condition of the chain is one element, so an arm's predicate can select any value
    scalar_conditions: bool = True
    unsafe_reasons: list[str] = field(default_factory=list)
    helper_edits: list[TextEdit] = field(default_factory=list)  # helpers for the messages of the branches

    @property
    def self_name(self) -> str | None:
        return self.function.self_name

    @property
    def owner(self) -> ClassInfo | None:
        """The class whose method holds the `if` (None outside a method)."""
        method = self.function.method
        return method.owner if method is not None else None

    @property
    def end(self) -> ast.stmt:
        """The last statement the rewrite replaces."""
        return self.following[-1] if self.following else self.node

    @property
    def last_line(self) -> int:
        return self.end.end_lineno or self.node.lineno

    def unsafe(self, reason: str) -> None:
        if reason not in self.unsafe_reasons:
            self.unsafe_reasons.append(reason)

    def add_helpers(self, edits: list[TextEdit]) -> None:
        for edit in edits:
            if edit not in self.helper_edits:
                self.helper_edits.append(edit)
