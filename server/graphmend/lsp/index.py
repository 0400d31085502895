"""The workspace index: every Python file's project summary, so that the analysis of an open
document knows what other files of the workspace compile or call in it.

Only summaries are held (a few KB per file), never texts or trees. A file's summary comes from
its open document's text while it is open (each analysis returns one), from disk otherwise (the
background build, saves, the client's file watchers). The `Project` joining them is rebuilt only
when a file's call graph changes; an edit that only moves lines swaps the summary in place.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import api
from ..api import ModuleSummary, Project, ProjectContext


class WorkspaceIndex:
    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.disk: dict[str, ModuleSummary] = {}  # real path → summary of the file on disk
        self.open: dict[str, ModuleSummary] = {}  # real path → summary of its open document's text
        self.built = False  # the background build has finished
        self.generation = 0  # bumped whenever the project must be rebuilt
        self._project: Project | None = None
        # While the background build runs, the last project serves open documents: a rebuild per
        # batch of summaries would make every keystroke wait for one (0.3 s on transformers). What
        # the open documents change themselves still rebuilds it; the build's end re-analyses them.
        self._interim: Project | None = None
        # The workspace's settings: which libraries are followed and how their files are checked.
        self.settings = api.Settings()

    @staticmethod
    def key(path: Path) -> str:
        return os.path.realpath(path)

    def covers(self, path: Path) -> bool:
        """Whether `path` lies in a workspace folder."""
        real = Path(self.key(path))
        return any(real == root or root in real.parents for root in self.roots)

    def summaries(self) -> list[ModuleSummary]:
        return list({**self.disk, **self.open}.values())

    @property
    def stale(self) -> bool:
        """The project must be rebuilt before an open document is analysed."""
        return self._serving is None

    @property
    def _serving(self) -> Project | None:
        """The project open documents are analysed with now: the current one, else while the
        build runs the last one built."""
        return self._project if self._project is not None or self.built else self._interim

    @property
    def project(self) -> Project:
        if self._project is None:
            self._project = workspace_project(self.summaries(), self.settings)
        return self._project

    def set_project(self, project: Project, generation: int) -> None:
        """A project built off the event loop from the summaries of `generation`; ignored when the
        index changed since."""
        if generation == self.generation:
            self._project = project

    def use_settings(self, settings: api.Settings) -> None:
        """The workspace's settings now; the project is rebuilt when they changed."""
        if settings != self.settings:
            self.settings = settings
            self._invalidate()

    def context_for(self, path: Path | None) -> ProjectContext:
        if path is None or not (self.disk or self.open):
            return ProjectContext()
        return (self._serving or self.project).context_for(self.key(path))

    def update(self, path: Path, summary: ModuleSummary | None, from_open_document: bool) -> bool:
        """Record a file's new summary (None: the file is gone or cannot be analysed). True when
        the call graph changed, so that contexts may have changed and the project must be rebuilt."""
        key = self.key(path)
        table = self.open if from_open_document else self.disk
        old = table.get(key)
        if summary is None:
            if old is None:
                return False
            del table[key]
        else:
            table[key] = summary
        shadowed = not from_open_document and key in self.open  # the open text is what counts
        if shadowed:
            return False
        current = self._serving
        if summary is not None and current is not None and current.replace(summary):
            return False  # only positions moved
        self._invalidate(keep_interim=not from_open_document and not self.built)
        return True

    def _invalidate(self, keep_interim: bool = False) -> None:
        self._interim = (self._project or self._interim) if keep_interim else None
        self._project = None
        self.generation += 1

    def close(self, path: Path) -> bool:
        """The document is closed: its file on disk counts again."""
        key = self.key(path)
        if self.open.pop(key, None) is None:
            return False
        self._invalidate()
        return True


def workspace_project(summaries: list[ModuleSummary], settings: api.Settings) -> Project:
    """The workspace's project, put together as the CLI's is (`api.assemble_project`), every
    workspace file reported (the costly part: run it off the event loop)."""
    return api.assemble_project(summaries, [summary.path for summary in summaries], settings)[0]
