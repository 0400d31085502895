"""A file as units, for re-analysing only what an edit touched.

A unit is a top-level function or class (decorators included); everything else (imports,
module-level statements, the blank lines and comments between statements) is the skeleton. The
diagnostics of a unit depend on its own text, the skeleton statements it reads, the units its
reached functions call (transitively), the units of its classes' same-file bases and attribute
classes, and how its functions are reached (entries, chains, capture settings). `UnitCache` keeps
each unit's diagnostics with positions relative to units and skeleton statements, and reuses them
while all of that is unchanged, so that an edit costs in proportion to what it changes:

- an edit inside one function re-analyses its unit and the units that depend on it;
- a comment or blank lines between top-level statements re-analyse nothing but the units they
  move whose diagnostics name their lines (an in-graph message's fix writes the call's line, and
  GM204 compares the line such a call names with its own);
- a new, removed or changed top-level statement (an import, a constant, a helper function)
  re-analyses the units that read a name it binds (found by the words of their text, through the
  skeleton statements those names lead to), and every unit when it binds no name (a setting, a
  registration) or imports torch or NumPy, which rewrites and the analysis read everywhere.

A unit's fixes depend on the skeleton in two more ways, each kept with its diagnostics: the
generated names asked of the file's words (reused while each answer holds), and an edit placed
outside the unit (an import, a deferral helper after the imports: reused while the top-level
statements up to the one after it are unchanged).
"""

from __future__ import annotations

import ast
import bisect
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from .diagnostics import Diagnostic, TextEdit
from .fixes.base import WORD
from .regions import CompiledRegions, Reach
from .semantics import ClassInfo, FunctionInfo, ModuleIndex
from .source import Position, Range, SourceText

_UNIT_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_READ_EVERYWHERE = frozenset({"torch", "numpy"})  # imports every unit's analysis and rewrites read

Relative = tuple[str, str, int, int]  # see `Layout.relative`


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Unit:
    name: str  # "def f", "class C"; "class C#2" for a second top-level C
    start: int  # 0-based first line, decorators included
    end: int  # 0-based last line
    digest: str

    @property
    def top_name(self) -> str:
        """The name the unit binds at module level."""
        return self.name.split(" ", 1)[1].split("#", 1)[0]


@dataclass(frozen=True)
class Statement:
    """A top-level statement outside every unit: a part of the skeleton."""

    id: str  # the digest of its lines, "#n" for the n-th statement of the same text
    start: int  # 0-based first line
    end: int  # 0-based last line
    binds: frozenset[str]  # the names it binds at module level
    words: frozenset[str]  # the words of its text: what the names it binds lead to
    everywhere: bool  # read by every unit: it binds no name, sets an attribute, or imports torch or NumPy
    opening: str = ""  # "import", or "docstring" for the module's: what places a module-level insertion


class Layout:
    """The units of one text, its skeleton statements, and what each unit reads of them."""

    def __init__(self, tree: ast.Module, source: SourceText, words: dict[str, frozenset[str]] | None = None) -> None:
        """`words`: the words of unit texts by digest, kept from an earlier version (and filled)."""
        self.source = source
        self.units: list[Unit] = []
        self.statements: list[Statement] = []
        self._items: list[Unit | Statement] = []  # both, in file order
        self._words = words if words is not None else {}
        seen: dict[str, int] = {}
        lines = source.lines
        for stmt in tree.body:
            end = (stmt.end_lineno or stmt.lineno) - 1
            if not isinstance(stmt, _UNIT_TYPES):
                text = "\n".join(lines[stmt.lineno - 1 : end + 1])
                digest = _digest(text)
                seen[digest] = seen.get(digest, 0) + 1
                binds, everywhere = _bindings(stmt)
                opening = (
                    "import"
                    if isinstance(stmt, (ast.Import, ast.ImportFrom))
                    else "docstring"
                    if stmt is tree.body[0] and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    else ""
                )
                statement = Statement(
                    f"{digest}#{seen[digest]}",
                    stmt.lineno - 1,
                    end,
                    binds,
                    frozenset(WORD.findall(text)),
                    everywhere,
                    opening,
                )
                self.statements.append(statement)
                item: Unit | Statement = statement
            else:
                start = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)]) - 1
                kind = "class" if isinstance(stmt, ast.ClassDef) else "def"
                base = f"{kind} {stmt.name}"
                seen[base] = seen.get(base, 0) + 1
                name = base if seen[base] == 1 else f"{base}#{seen[base]}"
                item = Unit(name, start, end, _digest("\n".join(lines[start : end + 1])))
                self.units.append(item)
            self._items.append(item)
        self.by_name = {u.name: u for u in self.units}
        self._starts = [u.start for u in self.units]
        self._statement_starts = [s.start for s in self.statements]
        self._statements_by_id = {s.id: s for s in self.statements}
        self._binders: dict[str, list[Statement]] = {}
        for statement in self.statements:
            for name in statement.binds:
                self._binders.setdefault(name, []).append(statement)
        self._read: dict[str, tuple[str, frozenset[str]]] = {}
        self._prefixes: dict[str, str] = {}
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

    def statement_at(self, line: int) -> Statement | None:
        index = bisect.bisect_right(self._statement_starts, line) - 1
        if index >= 0 and self.statements[index].start <= line <= self.statements[index].end:
            return self.statements[index]
        return None

    def unit_of(self, function: FunctionInfo) -> Unit | None:
        top: FunctionInfo | None = function
        while top is not None and top.parent is not None:
            top = top.parent
        return self.unit_at(top.node.lineno - 1) if top is not None else None

    def name_words(self, unit: Unit) -> tuple[frozenset[str], ...]:
        """What the unit's fresh names must avoid: the words of its own text and of the skeleton's
        (each found once per file, not once per unit, and kept apart: a file of thousands of functions)."""
        return self.unit_words(unit), self.skeleton_words

    def unit_words(self, unit: Unit) -> frozenset[str]:
        found = self._words.get(unit.digest)
        if found is None:
            found = self._words[unit.digest] = frozenset(
                WORD.findall("\n".join(self.source.lines[unit.start : unit.end + 1]))
            )
        return found

    def reads(self, unit: Unit) -> tuple[str, frozenset[str]]:
        """What of the skeleton the unit's analysis reads, as a digest, and the names it leads to:
        the statements read everywhere, those binding a word of the unit, and, from their words in
        turn, those binding a word of theirs; with the other units those names are."""
        found = self._read.get(unit.name)
        if found is not None:
            return found
        chosen = [s for s in self.statements if s.everywhere]
        names = set(self.unit_words(unit)).union(*(s.words for s in chosen))
        pending = list(names)
        taken = {s.id for s in chosen}
        while pending:
            for statement in self._binders.get(pending.pop(), ()):
                if statement.id not in taken:
                    taken.add(statement.id)
                    pending += statement.words - names
                    names |= statement.words
        parts = [s.id for s in self.statements if s.id in taken]
        parts += sorted(u.name for u in self.units if u.top_name in names)
        found = self._read[unit.name] = (_digest("\n".join(parts)), frozenset(names))
        return found

    @cached_property
    def skeleton_words(self) -> frozenset[str]:
        return frozenset(WORD.findall(self.skeleton_text))

    def prefix(self, statement_id: str) -> str:
        """What an insertion placed at the end of a skeleton statement depends on (the deferral
        helper after the imports, an `import torch`): that statement and the next item, each with
        whether a blank line (or the end) follows it, and the items before as the rewrites choose
        the place: imports (a run of them as one: one more in the middle moves nothing) and the
        module's docstring by kind, everything else by its text. "" when the statement is gone."""
        if statement_id not in self._prefixes:
            at = next((n for n, i in enumerate(self._items) if isinstance(i, Statement) and i.id == statement_id), None)
            lines = self.source.lines
            parts: list[str] = []
            for number, item in enumerate(self._items[: at + 2] if at is not None else ()):
                opening = item.opening if isinstance(item, Statement) else ""
                if number < at and opening:  # type: ignore[operator]
                    if not parts or parts[-1] != opening:
                        parts.append(opening)
                    continue
                name = item.id if isinstance(item, Statement) else item.name + item.digest
                parts.append(f"{name}:{item.end + 1 >= len(lines) or not lines[item.end + 1].strip()}")
            self._prefixes[statement_id] = _digest("\n".join(parts)) if at is not None else ""
        return self._prefixes[statement_id]

    def later(self, first: str | None, second: str) -> str:
        """Of two skeleton statements (by id; `first` may be None), the one further down."""
        if first is None:
            return second
        return first if self._statements_by_id[first].start > self._statements_by_id[second].start else second

    # ------------------------------------------------------------------ relative positions
    def relative(self, position: Position) -> Relative:
        """("in", unit, line in unit, column), ("stmt", skeleton statement, line in it, column),
        or ("after", previous unit or "", lines after it, column) in the blank and comment lines."""
        unit = self.unit_at(position.line)
        if unit is not None:
            return "in", unit.name, position.line - unit.start, position.character
        statement = self.statement_at(position.line)
        if statement is not None:
            return "stmt", statement.id, position.line - statement.start, position.character
        index = bisect.bisect_right(self._starts, position.line) - 1
        previous = self.units[index] if index >= 0 else None
        base = previous.end + 1 if previous is not None else 0
        return "after", previous.name if previous is not None else "", position.line - base, position.character

    def absolute(self, relative: Relative) -> Position | None:
        """The position now, None when its unit or statement is gone."""
        where, name, delta, character = relative
        if where == "in":
            unit = self.by_name.get(name)
            return Position(unit.start + delta, character) if unit is not None else None
        if where == "stmt":
            statement = self._statements_by_id.get(name)
            return Position(statement.start + delta, character) if statement is not None else None
        if name and name not in self.by_name:
            return None
        base = self.by_name[name].end + 1 if name else 0
        return Position(base + delta, character)


def _bindings(stmt: ast.stmt) -> tuple[frozenset[str], bool]:
    """The names a top-level statement binds, and whether every unit reads it (see `Statement`)."""
    names: set[str] = set()
    everywhere = False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            everywhere = True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".", 1)[0])
                everywhere |= alias.name.split(".", 1)[0] in _READ_EVERYWHERE
        elif isinstance(node, ast.ImportFrom):
            everywhere |= node.level == 0 and (node.module or "").split(".", 1)[0] in _READ_EVERYWHERE
            for alias in node.names:
                everywhere |= alias.name == "*"
                names.add(alias.asname or alias.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            everywhere = True
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return frozenset(names), everywhere or not names


# ---------------------------------------------------------------------------------------- dependencies


@dataclass(frozen=True)
class Dependencies:
    """What the analysis of a unit's reaches may read besides the unit: other units' text, and the
    module's top level (a call there that runs a compiled function passes its parameters' kinds)."""

    units: set[str]
    top_level: bool


def dependencies(layout: Layout, regions: CompiledRegions, reaches: list[Reach]) -> Dependencies:
    """The units whose text the analysis of `reaches` may read: the units of every function they
    call (transitively), of the classes they belong to and those classes' same-file bases and
    attribute classes, and of the functions that call a compiled one as its frame (what they pass
    is its parameters' kinds); and whether the top level makes such a call."""
    units: set[str] = set()
    top_level = False
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
        # A dunder method's body is never read by its caller's analysis (a call of it gives no kind):
        # what Dynamo finds in it is its own unit's, reached again each analysis. Following them
        # would make every class depend on each class its `__init__` builds.
        functions.extend(c for c in regions.callees(function) if not _is_dunder(c.name))
        for caller, _ in regions.calls_of_entry(function):
            if caller is None:
                top_level = True
            else:
                functions.append(caller)
        owner = function.method.owner if function.method else None
        if owner is not None:
            for cls in _classes_around(owner, regions):
                unit = layout.unit_at(cls.node.lineno - 1)
                if unit is not None:
                    units.add(unit.name)
                if "__init__" in cls.methods:
                    functions.append(cls.methods["__init__"])
    return Dependencies(units, top_level)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _classes_around(owner: ClassInfo, regions: CompiledRegions) -> Iterable[ClassInfo]:
    """A class, its same-file bases, and the same-file classes of its attributes (`self.block = Block()`)."""
    for cls in owner.mro():
        yield cls
        for value in regions.class_attribute_instances(cls).values():
            if isinstance(value, ClassInfo):
                yield from value.mro()


def signatures(index: ModuleIndex, names: frozenset[str]) -> str:
    """What other units may ask of a unit when its calls are resolved: the classes' bases and
    method names, and which of `names` (the words the unit's text leads to) are functions."""
    parts = [
        f"class {c.name}({','.join(map(str, c.base_names))}):{','.join(c.methods)}" for c in index.classes.values()
    ]
    parts += [f"def {name}" for name in index.functions if name in names]
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
    key: tuple[object, ...]  # what of the skeleton the unit reads, indentation, settings, the reach key
    depends: dict[str, str]  # unit name → digest its text had
    diagnostics: tuple[Diagnostic, ...]  # positions relative (see `Layout.relative`)
    asked: tuple[tuple[str, bool], ...] = ()  # generated names asked of the file's words, and the answers
    prefix: tuple[str, str] | None = None  # an edit after a skeleton statement: that statement, `Layout.prefix`
    # a position between statements, or a top-level call of a compiled function it reads: the skeleton's digest
    skeleton: str | None = None
    # Where the unit started, when its diagnostics name its lines: a fix that writes the line it is
    # on, an in-graph message's call that GM204 holds to its line (`Fix.names_its_line`)
    start: int | None = None


@dataclass
class UnitCache:
    """Per-unit diagnostics and call edges of one document, for its next version."""

    _units: dict[str, _Stored] = field(default_factory=dict)
    _edges: dict[str, tuple[tuple[object, ...], dict[str, tuple[str, ...]]]] = field(default_factory=dict)
    words: dict[str, frozenset[str]] = field(default_factory=dict)  # unit text digest → its words
    hits: int = 0
    misses: int = 0

    def callees(
        self, layout: Layout, index: ModuleIndex
    ) -> Callable[[CompiledRegions, FunctionInfo], list[FunctionInfo]]:
        """The call graph for `CompiledRegions`, with the edges of a unit reused while its text,
        the skeleton statements it reads and the file's signatures it may ask for are the same:
        what a call resolves to depends on nothing else."""
        modules = tuple(sorted(name for name, cls in index.classes.items() if cls.is_module))
        unique = len({f.qualname for f in index.all_functions}) == len(index.all_functions)

        def callees(regions: CompiledRegions, function: FunctionInfo) -> list[FunctionInfo]:
            unit = layout.unit_of(function) if unique else None
            if unit is None:
                return list(regions.own_callees(function))
            read, names = layout.reads(unit)
            key = (unit.digest, read, signatures(index, names), modules)
            stored = self._edges.get(unit.name)
            if stored is None or stored[0] != key:
                stored = self._edges[unit.name] = (key, {})
            found_names = stored[1].get(function.qualname)
            if found_names is None:
                found = list(regions.own_callees(function))
                stored[1][function.qualname] = tuple(f.qualname for f in found)
                return found
            return [f for f in map(index.function_by_qualname, found_names) if f is not None]

        return callees

    def lookup(
        self, unit: Unit, key: tuple[object, ...], layout: Layout, file_has_word: Callable[[str], bool]
    ) -> list[Diagnostic] | None:
        """The unit's diagnostics from the last version, when nothing they depend on changed."""
        stored = self._units.get(unit.name)
        found = self._reusable(stored, unit, key, layout, file_has_word) if stored is not None else None
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found

    def _reusable(
        self,
        stored: _Stored,
        unit: Unit,
        key: tuple[object, ...],
        layout: Layout,
        file_has_word: Callable[[str], bool],
    ) -> list[Diagnostic] | None:
        if (
            stored.key != key
            or any(
                (layout.by_name.get(name) is None or layout.by_name[name].digest != digest)
                for name, digest in stored.depends.items()
            )
            or (stored.skeleton is not None and stored.skeleton != layout.skeleton_digest)
            or (stored.prefix is not None and layout.prefix(stored.prefix[0]) != stored.prefix[1])
            or any(file_has_word(name) != answer for name, answer in stored.asked)
            or (stored.start is not None and stored.start != unit.start)
        ):
            return None
        found = []
        for diagnostic in stored.diagnostics:
            moved = _transform(diagnostic, layout.absolute)
            if moved is None:
                return None
            found.append(moved)
        return found

    def store(
        self,
        unit: Unit,
        key: tuple[object, ...],
        depends: Dependencies,
        diagnostics: list[Diagnostic],
        layout: Layout,
        asked: dict[str, bool],
    ) -> None:
        encoded = []
        names = set(depends.units) | {unit.name}
        outside: str | None = None  # the last skeleton statement an edit outside the unit is placed in
        in_gaps = False
        for diagnostic in diagnostics:
            relative = _transform(diagnostic, layout.relative)
            assert relative is not None
            encoded.append(relative)
            positions = list(_positions(relative))
            names |= {p[1] for p in positions if p[0] == "in"}
            in_gaps |= any(p[0] == "after" for p in positions)
            for edit in relative.fix.edits if relative.fix is not None else ():
                for place in (edit.range.start, edit.range.end):
                    if place[0] == "stmt":  # type: ignore[index]  # (in another unit: `depends` has its text)
                        outside = layout.later(outside, place[1])  # type: ignore[index]
        self._units[unit.name] = _Stored(
            key,
            {name: layout.by_name[name].digest for name in names if name in layout.by_name},
            tuple(encoded),
            tuple(sorted(asked.items())),
            (outside, layout.prefix(outside)) if outside is not None else None,
            layout.skeleton_digest if in_gaps or depends.top_level else None,
            unit.start if _names_its_lines(layout, unit, diagnostics) else None,
        )

    def forget_missing(self, layout: Layout) -> None:
        """Drop units that no longer exist (a renamed or deleted function), and the words of texts
        no unit has any more."""
        for table in (self._units, self._edges):
            for name in [n for n in table if n not in layout.by_name]:
                del table[name]
        digests = {unit.digest for unit in layout.units}
        for digest in [d for d in self.words if d not in digests]:
            del self.words[digest]


def _names_its_lines(layout: Layout, unit: Unit, diagnostics: list[Diagnostic]) -> bool:
    """Whether the unit's diagnostics hold only where it starts now: a fix writes the line it is on,
    or the unit calls an in-graph message helper (GM204 compares the line it names with its own)."""
    if any(d.fix is not None and d.fix.names_its_line for d in diagnostics):
        return True
    return any(word.endswith("_in_graph") for word in layout.unit_words(unit))


def _transform(diagnostic: Diagnostic, convert: Callable[[Any], Any]) -> Diagnostic | None:
    """The diagnostic with every position of its own file passed through `convert` (None when a
    position cannot be: its unit or statement is gone)."""
    missing = False

    def point(position: object) -> object:
        nonlocal missing
        converted = convert(position)
        missing |= converted is None
        return converted

    def span(r: Range) -> Range:
        return Range(point(r.start), point(r.end))  # type: ignore[arg-type]

    related = tuple(replace(r, range=span(r.range)) if r.path is None else r for r in diagnostic.related)
    fix = diagnostic.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(TextEdit(span(e.range), e.new_text) for e in fix.edits))
    moved = replace(diagnostic, range=span(diagnostic.range), related=related, fix=fix)
    return None if missing else moved


def _positions(diagnostic: Diagnostic) -> Iterable[tuple[str, str, int, int]]:
    ranges = [diagnostic.range, *(r.range for r in diagnostic.related if r.path is None)]
    if diagnostic.fix is not None:
        ranges += [e.range for e in diagnostic.fix.edits]
    for r in ranges:
        yield r.start  # type: ignore[misc]
        yield r.end  # type: ignore[misc]
