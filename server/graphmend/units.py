"""A file as units, for re-analysing only what an edit touched.

A unit is a top-level function or class (decorators included); everything else (imports,
module-level statements, the blank lines and comments between statements) is the skeleton. The
diagnostics of a unit depend on its own text, the skeleton, the units its reached functions call
(transitively), the units of its classes' same-file bases and attribute classes, and how its
functions are reached (entries, chains, capture settings). `UnitCache` keeps each unit's
diagnostics with positions relative to units, and reuses them when all of that is unchanged: an
edit inside one function re-analyses its unit and the units that depend on it, nothing else.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from .diagnostics import Diagnostic, TextEdit
from .regions import CompiledRegions, Reach
from .semantics import ClassInfo, FunctionInfo, ModuleIndex
from .source import Position, Range, SourceText

_UNIT_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Unit:
    name: str  # "def f", "class C"; "class C#2" for a second top-level C
    start: int  # 0-based first line, decorators included
    end: int  # 0-based last line
    digest: str


class Layout:
    """The units of one text, and its skeleton."""

    def __init__(self, tree: ast.Module, source: SourceText) -> None:
        self.source = source
        self.units: list[Unit] = []
        seen: dict[str, int] = {}
        lines = source.lines
        for stmt in tree.body:
            if not isinstance(stmt, _UNIT_TYPES):
                continue
            start = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)]) - 1
            end = (stmt.end_lineno or stmt.lineno) - 1
            kind = "class" if isinstance(stmt, ast.ClassDef) else "def"
            base = f"{kind} {stmt.name}"
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base}#{seen[base]}"
            self.units.append(Unit(name, start, end, _digest("\n".join(lines[start : end + 1]))))
        self.by_name = {u.name: u for u in self.units}
        self._starts = [u.start for u in self.units]
        skeleton, line = [], 0
        for unit in self.units:
            skeleton += lines[line : unit.start]
            skeleton.append(f"<{unit.name}>")
            line = unit.end + 1
        skeleton += lines[line:]
        self.skeleton_text = "\n".join(skeleton)
        self.skeleton_digest = _digest(self.skeleton_text)

    def unit_at(self, line: int) -> Unit | None:
        index = bisect.bisect_right(self._starts, line) - 1
        if index >= 0 and self.units[index].start <= line <= self.units[index].end:
            return self.units[index]
        return None

    def unit_of(self, function: FunctionInfo) -> Unit | None:
        top: FunctionInfo | None = function
        while top is not None and top.parent is not None:
            top = top.parent
        return self.unit_at(top.node.lineno - 1) if top is not None else None

    def name_text(self, unit: Unit) -> str:
        """What the unit's fresh names must avoid: its own text and the skeleton's."""
        return "\n".join(self.source.lines[unit.start : unit.end + 1]) + "\n" + self.skeleton_text

    # ------------------------------------------------------------------ relative positions
    def relative(self, position: Position) -> tuple[str, str, int, int]:
        """("in", unit, line in unit, column), or ("after", previous unit or "", lines after it, column)."""
        unit = self.unit_at(position.line)
        if unit is not None:
            return "in", unit.name, position.line - unit.start, position.character
        index = bisect.bisect_right(self._starts, position.line) - 1
        previous = self.units[index] if index >= 0 else None
        base = previous.end + 1 if previous is not None else 0
        return "after", previous.name if previous is not None else "", position.line - base, position.character

    def absolute(self, relative: tuple[str, str, int, int]) -> Position:
        where, name, delta, character = relative
        if where == "in":
            return Position(self.by_name[name].start + delta, character)
        base = self.by_name[name].end + 1 if name else 0
        return Position(base + delta, character)


# ---------------------------------------------------------------------------------------- dependencies


def dependencies(layout: Layout, regions: CompiledRegions, reaches: list[Reach]) -> set[str]:
    """The units whose text the analysis of `reaches` may read: the units of every function they
    call (transitively), of the classes they belong to and those classes' same-file bases and
    attribute classes."""
    units: set[str] = set()
    functions: list[FunctionInfo] = [reach.chain[-1] for reach in reaches]
    seen: set[int] = set()
    while functions:
        function = functions.pop()
        if id(function.node) in seen:
            continue
        seen.add(id(function.node))
        unit = layout.unit_of(function)
        if unit is not None:
            units.add(unit.name)
        functions.extend(regions.callees(function))
        owner = function.method.owner if function.method else None
        if owner is not None:
            for cls in _classes_around(owner, regions):
                unit = layout.unit_at(cls.node.lineno - 1)
                if unit is not None:
                    units.add(unit.name)
                if "__init__" in cls.methods:
                    functions.append(cls.methods["__init__"])
    return units


def _classes_around(owner: ClassInfo, regions: CompiledRegions) -> Iterable[ClassInfo]:
    """A class, its same-file bases, and the same-file classes of its attributes (`self.block = Block()`)."""
    for cls in owner.mro():
        yield cls
        for value in regions.class_attribute_instances(cls).values():
            if isinstance(value, ClassInfo):
                yield from value.mro()


def signatures(index: ModuleIndex) -> str:
    """What other units may ask of a unit when calls are resolved: its classes' bases and method
    names, its functions' names."""
    parts = [
        f"class {c.name}({','.join(map(str, c.base_names))}):{','.join(c.methods)}" for c in index.classes.values()
    ]
    parts += [f"def {name}" for name in index.functions]
    return _digest("\n".join(parts))


def reach_key(layout: Layout, reaches: list[Reach], source: SourceText) -> tuple[object, ...]:
    """How the unit's functions are reached: entries, chains, settings, where the entry is."""
    key = []
    for reach in sorted(reaches, key=lambda r: r.chain[-1].qualname):
        entry = reach.entry
        site = source.node_range(entry.site) if hasattr(entry.site, "lineno") else None
        key.append(
            (
                tuple(f.qualname for f in reach.chain),
                entry.function.qualname,
                entry.why,
                tuple(sorted(entry.captures)),
                entry.origin,
                entry.via,
                entry.called,
                entry.cuda_graphs,
                (layout.relative(site.start), layout.relative(site.end)) if site is not None else None,
            )
        )
    return tuple(key)


# ---------------------------------------------------------------------------------------- the cache


@dataclass(frozen=True)
class _Stored:
    key: tuple[object, ...]  # skeleton digest, indentation, the reach key
    depends: dict[str, str]  # unit name → digest its text had
    diagnostics: tuple[Diagnostic, ...]  # positions relative (see `_encode`)


class UnitCache:
    """Per-unit diagnostics and call edges of one document, for its next version."""

    def __init__(self) -> None:
        self._units: dict[str, _Stored] = {}
        self._edges: dict[str, tuple[tuple[object, ...], dict[str, tuple[str, ...]]]] = {}
        self.hits = self.misses = 0

    def callees(
        self, layout: Layout, index: ModuleIndex
    ) -> Callable[[CompiledRegions, FunctionInfo], list[FunctionInfo]]:
        """The call graph for `CompiledRegions`, with the edges of a unit reused while its text, the
        skeleton and the file's signatures (classes, their bases and methods; functions) are the
        same: what a call resolves to depends on nothing else."""
        modules = tuple(sorted(name for name, cls in index.classes.items() if cls.is_module))
        signature = (layout.skeleton_digest, signatures(index), modules)
        unique = len({f.qualname for f in index.all_functions}) == len(index.all_functions)

        def callees(regions: CompiledRegions, function: FunctionInfo) -> list[FunctionInfo]:
            unit = layout.unit_of(function) if unique else None
            if unit is None:
                return list(regions.own_callees(function))
            key = (unit.digest, *signature)
            stored = self._edges.get(unit.name)
            if stored is None or stored[0] != key:
                stored = self._edges[unit.name] = (key, {})
            names = stored[1].get(function.qualname)
            if names is None:
                found = list(regions.own_callees(function))
                stored[1][function.qualname] = tuple(f.qualname for f in found)
                return found
            return [f for f in map(index.function_by_qualname, names) if f is not None]

        return callees

    def lookup(self, unit: Unit, key: tuple[object, ...], layout: Layout) -> list[Diagnostic] | None:
        stored = self._units.get(unit.name)
        if (
            stored is None
            or stored.key != key
            or any(
                (layout.by_name.get(name) is None or layout.by_name[name].digest != digest)
                for name, digest in stored.depends.items()
            )
        ):
            self.misses += 1
            return None
        self.hits += 1
        return [_transform(d, lambda p: layout.absolute(p)) for d in stored.diagnostics]  # type: ignore[arg-type]

    def store(
        self, unit: Unit, key: tuple[object, ...], depends: set[str], diagnostics: list[Diagnostic], layout: Layout
    ) -> None:
        encoded = []
        names = set(depends) | {unit.name}
        for diagnostic in diagnostics:
            encoded.append(_transform(diagnostic, layout.relative))  # type: ignore[arg-type]
            names |= {p[1] for p in _positions(encoded[-1]) if p[0] == "in"}
        self._units[unit.name] = _Stored(
            key, {name: layout.by_name[name].digest for name in names if name in layout.by_name}, tuple(encoded)
        )

    def forget_missing(self, layout: Layout) -> None:
        """Drop units that no longer exist (a renamed or deleted function)."""
        for table in (self._units, self._edges):
            for name in [n for n in table if n not in layout.by_name]:
                del table[name]


def _transform(diagnostic: Diagnostic, convert: Callable[[object], object]) -> Diagnostic:
    """The diagnostic with every position of its own file passed through `convert`."""

    def span(r: Range) -> Range:
        return Range(convert(r.start), convert(r.end))  # type: ignore[arg-type]

    related = tuple(replace(r, range=span(r.range)) if r.path is None else r for r in diagnostic.related)
    fix = diagnostic.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(TextEdit(span(e.range), e.new_text) for e in fix.edits))
    return replace(diagnostic, range=span(diagnostic.range), related=related, fix=fix, data=dict(diagnostic.data))


def _positions(diagnostic: Diagnostic) -> Iterable[tuple[str, str, int, int]]:
    ranges = [diagnostic.range, *(r.range for r in diagnostic.related if r.path is None)]
    if diagnostic.fix is not None:
        ranges += [e.range for e in diagnostic.fix.edits]
    for r in ranges:
        yield r.start  # type: ignore[misc]
        yield r.end  # type: ignore[misc]
