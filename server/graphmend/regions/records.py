"""The records compiled regions are told with: a compiled entry and why, how a function is reached
from one, what other files of the project say about this one, and calls that leave the file."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..diagnostics import Diagnostic, ProofSeen
from ..record.runs import FileRun
from ..semantics import FunctionInfo

CONFIG_PATCH = "torch._dynamo.config.patch"
CONFIGS = frozenset({"torch._dynamo.config", "torch.compiler.config"})  # `.patch(...)` on either registers alike
# The message sets a patch can set for the compiles in its scope, and how Dynamo treats their members:
# an entry's captures then hold "replayed:builtins.print", "dropped:logging.Logger.info"...
MESSAGE_SETTINGS = {
    "reorderable_logging_functions": "replayed",
    "ignore_logging_functions": "dropped",
    "ignore_logger_methods": "dropped",
}
# Dynamo settings under which what graphmend reports as GM301/GM302 is traced, not a break.
CAPTURE_SETTINGS = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})
# `torch.compiler.set_stance("force_eager")` at module level: from then on nothing compiles (measured on
# torch 2.13: no graph, no break), so the file's compile sites compile nothing. Carried with the
# capture settings (`ModuleSummary.captures`) to what those sites compile in other files.
FORCE_EAGER = "force_eager"


@dataclass(frozen=True)
class ExternalRef:
    """A call (or compile target) that leaves the file, by qualified name, resolved by the project:
    `call` runs what `target` names (a function, a static method); `table` runs one of the
    functions of the module-level dict `target`; `instance` calls an instance of the class
    `target` (its `forward` for a module); `method` calls method `member` on one."""

    kind: str
    target: str
    member: str = ""
    # Arguments that are tensors at the call (positions as "0", "1", ... and keyword names), so
    # the callee's parameters get the kinds compiled callers give them (a `table` or `call`).
    tensors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a compiled entry of another file is: its path and the name in its `def` line (0-based)."""

    path: str
    line: int
    character: int
    end_character: int


@dataclass(frozen=True)
class ExternalEntry:
    """A function of this file that compiled code of another file calls (or compiles)."""

    qualname: str
    why: str  # "reached from compiled `pkg.model.Net.forward` in model.py (...)", "compiled by ..."
    origin: Origin
    via: tuple[str, ...] = ()  # the functions of other files between the entry and this one
    called: bool = False  # reached through a call (not itself compiled by a compile site)
    cuda_graphs: str | None = None  # the compile site's request for CUDA graphs, in its file's words
    captures: frozenset[str] = frozenset()  # Dynamo capture settings the compiling file sets at module level


@dataclass(frozen=True)
class CalledFinding:
    """A finding of a file that is not reported itself (an installed library's, or a project file
    outside the checked paths), which a call of this file's compiled code leads to."""

    caller: str  # this file's function (qualname)
    call: ExternalRef  # the call in it that leads there (without tensor arguments)
    diagnostic: Diagnostic  # as the call reports it: its range is set at the call


@dataclass(frozen=True)
class ProjectContext:
    """What the rest of the project says about one file: which of its functions run compiled
    because of other files, which imported base classes are nn.Module subclasses, and what
    those bases' constructors bind."""

    entries: tuple[ExternalEntry, ...] = ()
    module_bases: frozenset[str] = frozenset()
    # Base classes in other files → the instance attributes their `__init__` chain binds.
    base_attributes: tuple[tuple[str, frozenset[str]], ...] = ()
    # Functions (and module-level tables of functions) of other files, by the qualified name this
    # file imports them under → (why running one is not pure, or None; a caveat, or None).
    foreign_functions: tuple[tuple[str, str | None, str | None], ...] = ()
    # Functions of this file → the parameters that compiled callers in other files pass tensors.
    tensor_parameters: tuple[tuple[str, frozenset[str]], ...] = ()
    # Imported bases found in the project that are not nn.Module subclasses (never taken for one by guess).
    plain_bases: frozenset[str] = frozenset()
    # (class, decorator): a class decorator of another file sets the class's `forward` at run time.
    replaced_forwards: tuple[tuple[str, str], ...] = ()
    # Functions of other files that return a value fixed under compile (a user's own
    # `def is_compiling(): return torch.compiler.is_compiling()`), as this file imports them → that value.
    compile_guards: tuple[tuple[str, bool], ...] = ()
    # Findings in files not reported themselves that this file's calls lead to (`library_calls.py`).
    called_findings: tuple[CalledFinding, ...] = ()
    # Names this file imports that other files of the project bind to a torch name (kornia's
    # `Tensor = torch.Tensor`, re-exported by `kornia.core`), as imported → that torch name.
    torch_aliases: tuple[tuple[str, str], ...] = ()
    # Module-level functions of a library module → the parameters no call in the project passes:
    # they hold their defaults wherever compiled code runs them (`Project._unpassed_parameters`).
    unpassed_parameters: tuple[tuple[str, frozenset[str]], ...] = ()
    # Functions of other files decorated with `torch.compiler.disable`, as this file imports them →
    # (their file, the line of the decorated `def`): each call from compiled code splits the graph.
    disabled_functions: tuple[tuple[str, str, int], ...] = ()
    # The newest recorded run's events in this file (`pipelines.with_newest_run`): the checker
    # confirms the findings on their lines, reports the others (GM5xx), and takes the functions
    # Dynamo traced there as compiled.
    run: FileRun | None = None
    # The verdicts of the project's proof records on fixes in this file, by fix hash (`proof_records`).
    proofs: tuple[tuple[str, ProofSeen], ...] = ()

    def disabled_function(self, qualname: str) -> tuple[str, int] | None:
        """Where the imported function `qualname` is defined, if it is decorated with `disable`."""
        return next(((path, line) for name, path, line in self.disabled_functions if name == qualname), None)

    def compile_guard(self, qualname: str) -> bool | None:
        return next((value for name, value in self.compile_guards if name == qualname), None)

    def forward_replaced_by(self, class_name: str) -> str | None:
        """The decorator that may swap `class_name.forward` at run time, as this file names it."""
        return next((decorator for name, decorator in self.replaced_forwards if name == class_name), None)

    def foreign_verdict(self, qualname: str) -> tuple[str | None, str | None] | None:
        """Purity of an imported function (or table): see `foreign_functions`; None when unknown."""
        return next(((reason, caveat) for name, reason, caveat in self.foreign_functions if name == qualname), None)

    def parameters_unpassed(self, qualname: str) -> frozenset[str]:
        return next((names for name, names in self.unpassed_parameters if name == qualname), frozenset())

    def parameters_given_tensors(self, qualname: str) -> frozenset[str]:
        return next((names for name, names in self.tensor_parameters if name == qualname), frozenset())


@dataclass(frozen=True)
class Entry:
    """A function Dynamo compiles as a top-level frame, and the node that says so."""

    function: FunctionInfo
    why: str
    site: ast.AST
    captures: frozenset[str] = frozenset()  # CAPTURE_SETTINGS turned on for this entry
    origin: Origin | None = None  # set when the entry is compiled because of another file
    via: tuple[str, ...] = ()  # with `origin`: the functions of other files that lead here
    called: bool = False  # with `origin`: compiled code of another file calls it (a nested frame)
    cuda_graphs: str | None = None  # the compile site's words when it asks for CUDA graphs (`cuda_graph_request`)


@dataclass(frozen=True)
class Reach:
    """How a function is reached from a compiled entry (the call chain, entry first)."""

    entry: Entry
    chain: tuple[FunctionInfo, ...]


FORWARD_IS_COMPILED = "nn.Module.forward is treated as compiled"  # the default assumption's reason
CUDA_GRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})  # the modes that turn on `triton.cudagraphs`
