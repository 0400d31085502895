"""`Project`: the summaries of a set of files joined, as the fronts and the checker see them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..diagnostics import Diagnostic
from ..regions import CalledFinding, ExternalRef, ProjectContext
from .context import Contexts
from .library_calls import CheckHidden, follow_calls
from .names import Key, Names
from .reach import Reach, Step
from .summary import ModuleSummary, graph_of


class Project:
    """Name resolution (`Names`), reach (`Reach`) and each file's context (`Contexts`) over one set
    of summaries, and the findings that compiled code's calls into files not reported lead to;
    `api.assemble_project` is the one place that builds it."""

    def __init__(
        self,
        summaries: Iterable[ModuleSummary],
        load_library: Callable[[str], ModuleSummary | None] | None = None,
        reported: Iterable[str] = (),
        check_hidden: CheckHidden | None = None,
    ) -> None:
        """`load_library` summarises an installed package's module by its dotted name (None: not
        installed, or not followed); the project calls it for a name no file of its own defines,
        so that reach goes on into the libraries compiled code calls (`libraries.py`). With
        `check_hidden` (the checker, over files with their contexts), the files compiled code
        reaches that are not `reported` are checked, and each reported file's context gets the
        findings its calls lead to (`library_calls.py`)."""
        self.names = Names(summaries, load_library)
        self.reach = Reach(self.names)
        self._contexts = Contexts(self.names, self.reach)
        self._called: dict[str, tuple[CalledFinding, ...]] = {}
        # The hidden files' own findings that the reported files' compiled code reaches (for `report-library-files`).
        self.hidden_findings: dict[str, tuple[Diagnostic, ...]] = {}
        if check_hidden is None:
            self.reached()
        else:
            self._called, self.hidden_findings = follow_calls(self, reported, check_hidden)

    @property
    def summaries(self) -> dict[str, ModuleSummary]:
        return self.names.summaries

    @property
    def library_paths(self) -> set[str]:
        """The library modules loaded so far."""
        return self.names.library_paths

    def reached(self) -> dict[Key, Step]:
        return self.reach.reached()

    def callers(self) -> dict[Key, set[Key]]:
        return self.reach.callers()

    def targets(self, ref: ExternalRef, importer: ModuleSummary) -> list[Key]:
        return self.reach.targets(ref, importer)

    def dotted(self, key: Key) -> str:
        return self.names.dotted(key)

    def context_for(self, path: str) -> ProjectContext:
        """What the rest of the project says about the file at `path`."""
        return self._contexts.context_for(path, self._called.get(path, ()))

    def replace(self, summary: ModuleSummary) -> bool:
        """Take a new summary of a file in place of the old one when only positions changed (the
        call graph is the same: the reach stays valid). False when the graph changed: then build
        a new Project."""
        old = self.summaries.get(summary.path)
        if old is None or graph_of(old) != graph_of(summary):
            return False
        self.summaries[summary.path] = summary
        return True
