"""Names across a project's files: which module, class, function or table a qualified name means.

The summaries are joined by module name: a name resolves through re-exports (`from .layers import
Block` in a package's `__init__.py`) and star imports, a class's bases are found in whatever file
defines them, and whether a class is an nn.Module subclass is decided through all of them. With a
library loader, a module no project file defines is looked up in the installed packages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..semantics import is_module_base_qualname, may_be_unseen_module_base
from .libraries import MAX_LIBRARY_MODULES
from .summary import ClassSummary, FunctionSummary, ModuleSummary

MAX_RE_EXPORTS = 8  # `from .a import X` chains followed when resolving a name

Key = tuple[str, str]  # (path, function qualname)


class Names:
    """The summaries of a project by path and by module name, and what their names resolve to."""

    def __init__(
        self, summaries: Iterable[ModuleSummary], load_library: Callable[[str], ModuleSummary | None] | None = None
    ) -> None:
        """`load_library` summarises an installed package's module by its dotted name (None: not
        installed, or not followed); it is asked for a name no file of the project defines."""
        self.summaries: dict[str, ModuleSummary] = {}
        self._by_name: dict[str, list[ModuleSummary]] = {}
        self._classes: dict[str, dict[str, ClassSummary]] = {}
        self.tables: dict[str, dict[str, tuple[str, ...]]] = {}
        self.imports: dict[str, dict[str, str]] = {}
        for summary in sorted(summaries, key=lambda s: s.path):
            self._add(summary, summary.name)
        self._load_library = load_library
        self.library_paths: set[str] = set()  # the library modules loaded
        self._not_installed: set[str] = set()
        self._is_module: dict[tuple[str, str], bool] = {}

    def _add(self, summary: ModuleSummary, name: str) -> None:
        self.summaries[summary.path] = summary
        if name:
            self._by_name.setdefault(name, []).append(summary)
        self._classes[summary.path] = {c.name: c for c in summary.classes}
        self.tables[summary.path] = dict(summary.tables)
        self.imports[summary.path] = dict(summary.imports)

    def module(self, name: str, importer: ModuleSummary | None) -> ModuleSummary | None:
        """The summary of the module `name` as `importer` sees it (a library's, loaded on demand)."""
        candidates = self._by_name.get(name)
        if not candidates:
            return self._library(name)
        if importer is not None and len(candidates) > 1:  # two files with one name: the importer's neighbour
            folder = Path(importer.path).parent
            return next((c for c in candidates if Path(c.path).parent == folder), candidates[0])
        return candidates[0]

    def _library(self, name: str) -> ModuleSummary | None:
        if self._load_library is None or name in self._not_installed or len(self.library_paths) >= MAX_LIBRARY_MODULES:
            return None
        summary = self._load_library(name)
        if summary is None or summary.path in self.summaries:
            self._not_installed.add(name)
            return None
        self.library_paths.add(summary.path)
        self._add(summary, name)
        return summary

    def resolve(
        self, qualname: str, importer: ModuleSummary | None = None, depth: int = 0
    ) -> tuple[str, ModuleSummary, str] | None:
        """What a qualified name defines in the project: ("function" | "class" | "table", module,
        qualname); a table is a module-level dict of functions."""
        if qualname.startswith(".") or depth > MAX_RE_EXPORTS:
            return None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self.module(".".join(parts[:cut]), importer)
            if summary is not None:
                return self._member(summary, parts[cut:], depth)
        return None

    def _member(self, summary: ModuleSummary, attrs: list[str], depth: int) -> tuple[str, ModuleSummary, str] | None:
        head, rest = attrs[0], attrs[1:]
        classes = self._classes[summary.path]
        if head in classes:
            if not rest:
                return "class", summary, head
            if len(rest) == 1:
                method = self.find_method(summary, head, rest[0])
                return ("function", *method) if method is not None else None
            return None
        if not rest and summary.function(head) is not None:
            return "function", summary, head
        if not rest and head in self.tables[summary.path]:
            return "table", summary, head
        imports = self.imports[summary.path]
        imported = imports.get(head)
        if imported is not None:  # a re-export: `from .layers import Block` in a package's __init__
            return self.resolve(".".join([imported, *rest]), summary, depth + 1)
        for name, module in imports.items():  # `from .geometric import *`
            if name.startswith("*") and (found := self.resolve(".".join([module, *attrs]), summary, depth + 1)):
                return found
        return None

    def function(self, qualname: str, importer: ModuleSummary) -> FunctionSummary | None:
        """The function a qualified name resolves to (None: not a function of the project)."""
        found = self.resolve(qualname, importer)
        return found[1].function(found[2]) if found is not None and found[0] == "function" else None

    def class_of(self, qualname: str, importer: ModuleSummary) -> tuple[ModuleSummary, str] | None:
        """The class a qualified name resolves to, as (its module, its name)."""
        if not importer.name and qualname[1:] in self._classes[importer.path]:  # a same-file base of a nameless file
            return importer, qualname[1:]
        found = self.resolve(qualname, importer)
        return (found[1], found[2]) if found is not None and found[0] == "class" else None

    def mro(self, summary: ModuleSummary, name: str) -> Iterator[tuple[ModuleSummary, ClassSummary]]:
        """The class, then its bases anywhere in the project, depth-first (enough for lookup)."""
        seen: set[tuple[str, str]] = set()
        stack = [(summary, name)]
        while stack:
            module, class_name = stack.pop(0)
            if (module.path, class_name) in seen or class_name not in self._classes[module.path]:
                continue
            seen.add((module.path, class_name))
            cls = self._classes[module.path][class_name]
            yield module, cls
            for base in cls.bases:
                found = self.class_of(base, module)
                if found is not None:
                    stack.append(found)

    def find_method(self, summary: ModuleSummary, class_name: str, method: str) -> tuple[ModuleSummary, str] | None:
        for module, cls in self.mro(summary, class_name):
            if method in cls.methods:
                return module, f"{cls.name}.{method}"
        return None

    def is_module_class(self, summary: ModuleSummary, class_name: str) -> bool:
        """An nn.Module subclass, through bases of any file of the project."""
        key = (summary.path, class_name)
        if key not in self._is_module:
            self._is_module[key] = False  # a cycle of bases is not a module
            cls = self._classes[summary.path].get(class_name)
            self._is_module[key] = cls is not None and (
                any(self._is_module_base(base, summary) for base in cls.bases)
                or self._guessed_module(summary, class_name)
            )
        return self._is_module[key]

    def _guessed_module(self, summary: ModuleSummary, class_name: str) -> bool:
        """`ModuleIndex`'s fallback across files: a class whose ancestry defines `forward` and has a
        base found in no checked file (nor in torch or the standard library) is taken for a module."""
        ancestry = list(self.mro(summary, class_name))
        return any("forward" in cls.methods for _, cls in ancestry) and any(
            not is_module_base_qualname(base)
            and self.class_of(base, module) is None
            and may_be_unseen_module_base(base)
            for module, cls in ancestry
            for base in cls.bases
        )

    def _is_module_base(self, base: str, importer: ModuleSummary) -> bool:
        if is_module_base_qualname(base):
            return True
        found = self.class_of(base, importer)
        return found is not None and self.is_module_class(*found)

    def external_name(self, qualname: str, importer: ModuleSummary | None = None, depth: int = 0) -> str | None:
        """The name outside the project that a qualified name comes to through re-exports and
        module-level aliases (`kornia.core.Tensor` → `torch.Tensor`); None when it is defined in the
        project or cannot be followed."""
        if qualname.startswith(".") or depth > MAX_RE_EXPORTS:
            return None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self.module(".".join(parts[:cut]), importer)
            if summary is None:
                continue
            imported = self.imports[summary.path].get(parts[cut])
            if imported is None:
                return None
            return self.external_name(".".join([imported, *parts[cut + 1 :]]), summary, depth + 1)
        return qualname if depth else None

    def dotted(self, key: Key) -> str:
        """A function as its module names it: `pkg.mod.Class.method`."""
        name = self.summaries[key[0]].name
        return f"{name}.{key[1]}" if name else key[1]
