"""Reach across a project: every function compiled code runs, over all files, and how it gets there.

Dynamo traces every function a compiled frame calls, in whatever module it is defined, so a
`print` in `utils.py` breaks the graph of a `forward` in `model.py`. The search starts at every
compiled entry (a compile site, or `forward` of a module where forwards are compiled) and follows
calls across files; a method reached on a base class also reaches the override of each class
compiled code calls instances of.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from ..regions import FORWARD_IS_COMPILED, ExternalRef
from .names import Key, Names
from .summary import FunctionSummary, ModuleSummary


@dataclass(frozen=True)
class Step:
    """How a function is reached: the entry it is reached from and the function before it."""

    entry: Key
    why: str  # why the entry is compiled
    site: tuple[str, int] | None  # (path, index in its summary's entries) of the compile site; None: the entry's `def`
    previous: Key | None


class Reach:
    """What compiled code reaches over a project's `Names`, computed once and kept."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self._reached: dict[Key, Step] | None = None
        self._callers: dict[Key, set[Key]] | None = None
        self._tensor_parameters: dict[Key, set[str]] | None = None
        self._overrides: dict[Key, set[Key]] = {}  # a base method → the overrides `reached` dispatched to

    def targets(self, ref: ExternalRef, importer: ModuleSummary) -> list[Key]:
        """The functions an `ExternalRef` of `importer` runs."""
        names = self.names
        if ref.kind == "local":
            return [(importer.path, ref.target)]
        if ref.kind in ("call", "table"):
            found = names.resolve(ref.target, importer)
            if found is None:
                return []
            if found[0] == "table":
                return [(found[1].path, member) for member in names.tables[found[1].path][found[2]]]
            return [(found[1].path, found[2])] if found[0] == "function" else []
        cls = names.class_of(ref.target, importer)
        if cls is None:
            return []
        member = ref.member if ref.kind == "method" else ("forward" if names.is_module_class(*cls) else "__call__")
        method = names.find_method(*cls, member)
        return [(method[0].path, method[1])] if method is not None else []

    def reached(self) -> dict[Key, Step]:
        """Every function compiled code reaches, over all files. Crossing into another file costs
        one and a call within a file nothing (a 0-1 breadth-first search), so a function its own
        file's entries reach keeps that local chain, and another file is named only when needed.
        A method reached on a base class also reaches its overrides in the classes compiled code
        calls instances of (`self.compute_loss(...)` in a library's base `forward` runs the
        subclass's `compute_loss`): the search goes on until no new override is reached."""
        if self._reached is not None:
            return self._reached
        summaries = self.names.summaries
        cost: dict[Key, int] = {}
        reached: dict[Key, Step] = {}
        queue: deque[tuple[int, Key]] = deque()
        instantiated: set[tuple[str, str]] = set()  # (path, class name) of the instances compiled code calls

        def relax(key: Key, distance: int, step: Step, front: bool) -> None:
            if key[1] in summaries[key[0]].replayed or cost.get(key, distance + 1) <= distance:
                return
            cost[key], reached[key] = distance, step
            (queue.appendleft if front else queue.append)((distance, key))

        for entry_key, step, distance in sorted(self._entries(), key=lambda e: (e[2], not self.says_how(e[1]))):
            relax(entry_key, distance, step, front=False)
        while queue:
            while queue:
                distance, key = queue.popleft()
                if distance > cost[key]:
                    continue
                summary = summaries[key[0]]
                function = summary.function(key[1])
                if function is None:
                    continue
                step = reached[key]
                following = Step(step.entry, step.why, step.site, key)
                instantiated |= self._instances(summary, function)
                for callee_key in self.callees(summary, function):
                    crosses = callee_key[0] != summary.path
                    relax(callee_key, distance + crosses, following, front=not crosses)
            for base_key, override_key in self._dispatched(instantiated, reached):
                self._overrides.setdefault(base_key, set()).add(override_key)
                relax(override_key, cost[base_key] + (override_key[0] != base_key[0]), reached[base_key], front=False)
        self._reached = reached
        return reached

    def _instances(self, summary: ModuleSummary, function: FunctionSummary) -> set[tuple[str, str]]:
        """(path, class name) of the classes whose instances `function` calls or calls methods of."""
        found = set()
        for ref in function.external:
            if ref.kind in ("instance", "method"):
                cls = self.names.class_of(ref.target, summary)
                if cls is not None:
                    found.add((cls[0].path, cls[1]))
        return found

    def callees(self, summary: ModuleSummary, function: FunctionSummary) -> Iterator[Key]:
        """What a function calls: its own file's functions, then those its calls leaving the file run."""
        for callee in function.calls:
            yield summary.path, callee
        for ref in function.external:
            yield from self.targets(ref, summary)

    def _dispatched(self, instantiated: set[tuple[str, str]], reached: dict[Key, Step]) -> list[tuple[Key, Key]]:
        """(reached method of a base class, the override an instantiated subclass runs instead) not reached yet."""
        names = self.names
        found = []
        for path, class_name in sorted(instantiated):
            summary = names.summaries[path]
            for module, cls in list(names.mro(summary, class_name))[1:]:
                for method in cls.methods:
                    base_key = (module.path, f"{cls.name}.{method}")
                    if base_key not in reached:
                        continue
                    implementation = names.find_method(summary, class_name, method)
                    if implementation is None:
                        continue
                    override_key = (implementation[0].path, implementation[1])
                    if override_key != base_key and override_key not in reached:
                        found.append((base_key, override_key))
        return found

    def callers(self) -> dict[Key, set[Key]]:
        """Every reached function → the reached functions that call it (all of them: `reached`
        keeps one way in for each)."""
        if self._callers is None:
            found: dict[Key, set[Key]] = {}
            for key in self.reached():
                summary = self.names.summaries[key[0]]
                function = summary.function(key[1])
                for callee_key in self.callees(summary, function) if function is not None else ():
                    found.setdefault(callee_key, set()).add(key)
            for base_key, overrides in self._overrides.items():  # an override runs where its base is called
                for override_key in overrides:
                    found.setdefault(override_key, set()).update(found.get(base_key, ()))
            self._callers = found
        return self._callers

    def tensor_parameters(self) -> dict[Key, set[str]]:
        """Parameters that compiled code passes tensors, over every reached call of a function of
        another file (`ExternalRef.tensors`), whatever the callee's annotation says."""
        if self._tensor_parameters is not None:
            return self._tensor_parameters
        summaries = self.names.summaries
        found: dict[Key, set[str]] = {}
        for key in self.reached():
            summary = summaries[key[0]]
            function = summary.function(key[1])
            for ref in function.external if function is not None else ():
                if not ref.tensors:
                    continue
                for callee_key in self.targets(ref, summary):
                    callee = summaries[callee_key[0]].function(callee_key[1])
                    if callee is None:
                        continue
                    for label in ref.tensors:
                        name = (
                            callee.parameters[int(label)]
                            if label.isdigit() and int(label) < callee.positional
                            else label
                        )
                        if name in callee.parameters:
                            found.setdefault(callee_key, set()).add(name)
        self._tensor_parameters = found
        return found

    def says_how(self, step: Step) -> bool:
        """The compile site of `step` says how it compiles: CUDA graphs, or capture settings."""
        return self.cuda_graph_request(step) is not None or (
            step.site is not None and bool(self.names.summaries[step.site[0]].captures)
        )

    def cuda_graph_request(self, step: Step) -> str | None:
        """How the compile site of `step` asks for CUDA graphs (None: it does not, or it is a `def`)."""
        return self.names.summaries[step.site[0]].entries[step.site[1]].cuda_graphs if step.site is not None else None

    def _entries(self) -> Iterator[tuple[Key, Step, int]]:
        """Compiled entries, each with its cost: 0 in its own file, 1 for a compile site aimed at
        another file, except that one asking for CUDA graphs, or in a file that sets Dynamo capture
        settings at module level, costs 0 too (and comes first among equals): the mode it compiles
        in decides what the GM4xx rules say there, the settings which values break."""
        names = self.names
        for summary in list(names.summaries.values()):  # resolving a target may load a library module
            if summary.path in names.library_paths:
                continue  # what a library compiles itself is not the user's code
            for number, entry in enumerate(summary.entries):
                why = entry.why if entry.target.kind == "local" else f"{entry.why} of {summary.file_name}"
                for target in self.targets(entry.target, summary):
                    if names.summaries[target[0]].function(target[1]) is not None:
                        cost = int(target[0] != summary.path and entry.cuda_graphs is None and not summary.captures)
                        yield target, Step(target, why, (summary.path, number), None), cost
            if summary.forward_is_compiled:  # modules through bases of other files
                for cls in summary.classes:
                    if "forward" in cls.methods and names.is_module_class(summary, cls.name):
                        function = summary.function(f"{cls.name}.forward")
                        if function is not None:
                            key = (summary.path, function.qualname)
                            yield key, Step(key, FORWARD_IS_COMPILED, None, None), 0
