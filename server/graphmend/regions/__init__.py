"""Which code runs under torch.compile: entry points, and everything they call in the same file.

Dynamo traces into every Python function a compiled frame calls, so a break inside a helper is a
break of the compiled entry (see the nested-graph-break docs). Code that no entry reaches is never
compiled and must never be flagged. What other files of the project compile or call comes in as a
`ProjectContext` (see `project/`); calls that leave the file are named as `ExternalRef`s.

The package, each part a class built from the parts before it (passed to its constructor):
`records` (entries, reaches, references to other files), `scope_facts` (`ScopeFacts`: the calls
and bindings of one scope's own body, walked once), `instances` (`Instances`: what a name or a
`self.` attribute holds), `resolution` (`CallResolution`: what a name or a call runs),
`implicit` (`ImplicitCalls`: the dunder methods a statement or an operator runs), `call_graph`
(`CallGraph`: what each call of a function runs, and those methods), `entries` (`EntryFinder`: the
compile sites and what they compile), `entry_calls` (`EntryCalls`: the calls that run a compiled
function as its frame) and `compiled` (`CompiledRegions`: builds and holds the
parts, reaches every function from the entries, and is the one face the rest of graphmend reads).
"""

from .compiled import CompiledRegions
from .entries import compile_call_lines, cuda_graph_request
from .records import (
    CAPTURE_SETTINGS,
    CONFIG_PATCH,
    CUDA_GRAPH_MODES,
    FORWARD_IS_COMPILED,
    CalledFinding,
    Entry,
    ExternalEntry,
    ExternalRef,
    Origin,
    ProjectContext,
    Reach,
)
from .scope_facts import UNKNOWN_VALUE, bound_names

__all__ = [
    "CAPTURE_SETTINGS",
    "CONFIG_PATCH",
    "CUDA_GRAPH_MODES",
    "FORWARD_IS_COMPILED",
    "UNKNOWN_VALUE",
    "CalledFinding",
    "CompiledRegions",
    "Entry",
    "ExternalEntry",
    "ExternalRef",
    "Origin",
    "ProjectContext",
    "Reach",
    "bound_names",
    "compile_call_lines",
    "cuda_graph_request",
]
