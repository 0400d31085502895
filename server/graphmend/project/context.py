"""What the rest of a project says about one file: its `ProjectContext`.

Its functions that compiled code of other files reaches (with the chain that reaches them), the
imported bases that make its classes modules and what their constructors bind, what the functions
of other files it calls may run under a rewrite, the parameters compiled code passes tensors, the
torch names its imports alias, and for a library module the parameters no call passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .. import torch_api
from ..regions import CalledFinding, ExternalEntry, Origin, ProjectContext
from ..semantics import is_module_base_qualname
from .names import Key, Names
from .reach import Reach, Step
from .summary import ModuleSummary

_TORCH_ROOTS = frozenset({"torch", "numpy"})  # packages whose names imported aliases may stand for
# The names such an alias is looked for under (kornia's `Tensor`, `zeros`, `Module`...): only these
# imports are followed, so that checking a file loads no module just to learn it defines a function.
_TORCH_NAMES = frozenset(
    {"Tensor", "BoolTensor", "LongTensor", "FloatTensor", "Parameter", "Module", "Size", "dtype", "device"}
    | {name.rsplit(".", 1)[-1] for name in torch_api.TENSOR_FUNCTIONS | torch_api.BOOL_TENSOR_FUNCTIONS}
)


class Contexts:
    """Builds each file's `ProjectContext` from a project's `Names` and `Reach`."""

    def __init__(self, names: Names, reach: Reach) -> None:
        self.names = names
        self.reach = reach
        # Over the summaries known when it was computed (loading a library module adds one):
        # per called name the most positional arguments and the keywords passed; the escaped names.
        self._passed: tuple[int, dict[str, tuple[int, set[str]]], set[str]] | None = None

    def context_for(self, path: str, called_findings: Sequence[CalledFinding] = ()) -> ProjectContext:
        """What the rest of the project says about the file at `path`; `called_findings` are the
        findings of files not reported themselves that its calls lead to (`library_calls`)."""
        summary = self.names.summaries.get(path)
        if summary is None:
            return ProjectContext()
        entries = self._entries(summary)  # in this order: resolving a name may load a library module
        bases, plain, attributes = self._bases(summary)
        verdicts, guards, disabled = self._called(summary)
        replaced = self._replaced_forwards(summary)
        return ProjectContext(
            entries,
            frozenset(bases),
            tuple(attributes),
            tuple(verdicts),
            self._tensor_parameters(summary),
            frozenset(plain),
            replaced,
            tuple(guards),
            tuple(called_findings),
            self._torch_aliases(summary),
            self._unpassed_parameters(summary) if path in self.names.library_paths else (),
            tuple(disabled),
        )

    def _entries(self, summary: ModuleSummary) -> tuple[ExternalEntry, ...]:
        """The file's functions that compiled code of other files reaches, or that a compile site
        of another file compiles."""
        reached = self.reach.reached()
        entries = []
        for function in summary.functions:
            key = (summary.path, function.qualname)
            step = reached.get(key)
            if step is None:
                continue
            previous = step.previous[0] if step.previous is not None else self._origin(step).path
            if previous != summary.path:
                entries.append(self._external_entry(key, step))
        return tuple(entries)

    def _bases(self, summary: ModuleSummary) -> tuple[set[str], set[str], list[tuple[str, frozenset[str]]]]:
        """Its classes' bases from other files: those that are modules, those that are not, and
        what each one's constructors bind (each resolved once)."""
        foreign = sorted(
            {base for cls in summary.classes for base in cls.bases if not base.startswith(f"{summary.name}.")}
        )
        bases: set[str] = set()
        plain: set[str] = set()
        attributes = []
        for base in foreign:
            found = self.names.class_of(base, summary)
            if found is None:
                continue
            if not is_module_base_qualname(base):
                (bases if self.names.is_module_class(*found) else plain).add(base)
            bound = frozenset(name for _, cls in self.names.mro(*found) for name in cls.init_attributes)
            if bound:
                attributes.append((base, bound))
        return bases, plain, attributes

    def _called(
        self, summary: ModuleSummary
    ) -> tuple[list[tuple[str, str | None, str | None]], list[tuple[str, bool]], list[tuple[str, str, int]]]:
        """For the functions (and tables) of other files this file calls: what a rewrite may run,
        those that return a value fixed under compile, and those decorated with `disable` (where)."""
        verdicts = []
        guards = []
        disabled = []
        called = {ref.target for f in summary.functions for ref in f.external if ref.kind in ("call", "table")}
        for qualname in sorted(called):
            verdict = self._verdict(qualname, summary)
            if verdict is not None:
                verdicts.append((qualname, *verdict))
            found = self.names.resolve(qualname, summary)
            if found is None or found[0] != "function":
                continue
            module, member = found[1], found[2]
            function = module.function(member)
            if function is not None and function.compile_constant is not None:
                guards.append((qualname, function.compile_constant))
            if function is not None and member in module.disabled:
                disabled.append((qualname, module.path, function.line + 1))
        return verdicts, guards, disabled

    def _verdict(self, qualname: str, importer: ModuleSummary) -> tuple[str | None, str | None] | None:
        """Purity of the function (or table of functions) `qualname` names, from its summary."""
        found = self.names.resolve(qualname, importer)
        if found is None or found[0] not in ("function", "table"):
            return None
        members = self.names.tables[found[1].path][found[2]] if found[0] == "table" else (found[2],)
        caveat = None
        for member in members:
            function = found[1].function(member)
            if function is None or not function.purity:
                return None
            if function.purity != "pure":
                return f"calls `{member}`, which {function.purity.removeprefix('a branch ')}", None
            caveat = caveat or function.caveat or None
        return None, caveat

    def _replaced_forwards(self, summary: ModuleSummary) -> tuple[tuple[str, str], ...]:
        """(class, decorator) for its module classes whose class decorator swaps `forward`."""
        found = []
        for cls in summary.classes:
            if "forward" not in cls.methods:
                continue
            for decorator in cls.decorators:
                function = self.names.function(decorator, summary)
                if function is not None and function.replaces_forward:
                    found.append((cls.name, decorator))
        return tuple(found)

    def _tensor_parameters(self, summary: ModuleSummary) -> tuple[tuple[str, frozenset[str]], ...]:
        given = self.reach.tensor_parameters()
        return tuple(
            sorted(
                (f.qualname, frozenset(given[(summary.path, f.qualname)]))
                for f in summary.functions
                if (summary.path, f.qualname) in given
            )
        )

    def _unpassed_parameters(self, summary: ModuleSummary) -> tuple[tuple[str, frozenset[str]], ...]:
        """For the module-level functions of a library module: the parameters no call in the
        project passes (`_safe_divide(num, denom)` never given `zero_division`). Reach into a
        library goes only through the project's calls, so there they keep their defaults."""
        passed, escaped = self._passed_arguments()
        reached = self.reach.reached()
        found = []
        for function in summary.functions:
            name = function.qualname
            if "." in name or name in escaped or (summary.path, name) not in reached:
                continue
            most, keywords = passed.get(name, (0, set()))
            if "**" in keywords:
                continue
            unpassed = frozenset(
                parameter
                for position, parameter in enumerate(function.parameters)
                if (position >= function.positional or position >= most) and parameter not in keywords
            )
            if unpassed:
                found.append((name, unpassed))
        return tuple(found)

    def _passed_arguments(self) -> tuple[dict[str, tuple[int, set[str]]], set[str]]:
        """Over the project's files and the library modules compiled code reaches: per called name
        the most positional arguments and every keyword passed, and the names that escape."""
        known = len(self.names.summaries)
        if self._passed is None or self._passed[0] != known:
            passed: dict[str, tuple[int, set[str]]] = {}
            escaped: set[str] = set()
            reached = {path for path, _ in self.reach.reached()}
            for other in self.names.summaries.values():
                if other.path in self.names.library_paths and other.path not in reached:
                    continue  # loaded only to resolve a name: none of its code runs compiled
                for name, count, given in other.arguments:
                    most, names = passed.get(name, (0, set()))
                    passed[name] = (max(most, count), names | set(given))
                escaped.update(other.escaped)
            self._passed = known, passed, escaped
        return self._passed[1], self._passed[2]

    def _torch_aliases(self, summary: ModuleSummary) -> tuple[tuple[str, str], ...]:
        """The file's imports of names torch calls by that name that another module binds to a
        torch name (`from kornia.core import Tensor`)."""
        found = []
        for name, qualname in summary.imports:
            if name.startswith("*") or qualname.split(".", 1)[0] in _TORCH_ROOTS or name not in _TORCH_NAMES:
                continue
            target = self.names.external_name(qualname, summary)
            if target is not None and target.split(".", 1)[0] in _TORCH_ROOTS:
                found.append((qualname, target))
        return tuple(sorted(set(found)))

    def _external_entry(self, key: Key, step: Step) -> ExternalEntry:
        """The function at `key` as an entry of its file: why it is compiled, and the functions of
        other files on the way from the compiled entry."""
        summaries = self.names.summaries
        cuda_graphs = self.reach.cuda_graph_request(step)
        # the capture settings of the file that compiles it (module-level ones hold process-wide)
        captures = frozenset(summaries[step.site[0] if step.site is not None else step.entry[0]].captures)
        if step.previous is None:  # compiled by a compile site in another file
            return ExternalEntry(key[1], step.why, self._origin(step), cuda_graphs=cuda_graphs, captures=captures)
        entry_file = summaries[step.entry[0]].file_name
        why = f"reached from compiled `{self.names.dotted(step.entry)}` in {entry_file} ({step.why})"
        chain = []
        current: Key | None = step.previous
        reached = self.reach.reached()
        while current is not None and current != step.entry:
            chain.append(self.names.dotted(current))
            current = reached[current].previous
        return ExternalEntry(
            key[1],
            why,
            self._origin(step),
            tuple(reversed(chain)),
            called=True,
            cuda_graphs=cuda_graphs,
            captures=captures,
        )

    def _origin(self, step: Step) -> Origin:
        """Where the entry of `step` is, read from the current summaries (positions may have moved
        since the reach was computed: see `Project.replace`)."""
        summaries = self.names.summaries
        if step.site is not None:
            site = summaries[step.site[0]].entries[step.site[1]]
            return Origin(step.site[0], site.line, site.character, site.end_character)
        function = summaries[step.entry[0]].function(step.entry[1])
        assert function is not None
        return Origin(step.entry[0], function.line, function.character, function.end_character)


def context_key(context: ProjectContext) -> str:
    """A digest of a context, for caches: equal contexts give equal keys."""
    text = repr(
        (
            context.entries,
            sorted(context.module_bases),
            sorted(context.plain_bases),
            context.replaced_forwards,
            [(base, sorted(names)) for base, names in context.base_attributes],
            context.foreign_functions,
            [(name, sorted(names)) for name, names in context.tensor_parameters],
            context.compile_guards,
            context.called_findings,
            context.torch_aliases,
            [(name, sorted(names)) for name, names in context.unpassed_parameters],
            context.disabled_functions,
            context.run.key() if context.run is not None else None,
            context.proofs,
        )
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
