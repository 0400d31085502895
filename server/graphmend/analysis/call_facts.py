"""What a file's summary needs from kinds: which arguments of its calls to other files are
tensors (so the callee's parameters get the kinds compiled callers give them), and whether each
module-level function is pure (so other files' rewrites may run it unconditionally).

Computed from the file alone, with no project context, and only when asked: the summary of every
file of a workspace is built with it.
"""

from __future__ import annotations

import ast

from ..inference import FunctionAnalysis, ModuleAnalysis
from ..regions import CompiledRegions
from ..semantics import FunctionInfo, ModuleIndex
from .purity import function_verdict


class KindFacts:
    """What a summary needs from kinds, computed only when asked: which arguments of a call are
    tensors, and whether a module-level function is pure (see `analysis.purity`)."""

    def __init__(self, index: ModuleIndex, regions: CompiledRegions) -> None:
        self.index = index
        self.regions = regions
        self._module: ModuleAnalysis | None = None
        self._probes: dict[int, FunctionAnalysis] = {}

    @property
    def module(self) -> ModuleAnalysis:
        if self._module is None:
            self._module = ModuleAnalysis(self.index, self.regions)
        return self._module

    def tensor_arguments(self, function: FunctionInfo, call: ast.Call) -> tuple[str, ...]:
        """Arguments that are tensors: `"0"`, `"1"`, ... by position, keyword names. A name counts
        when every assignment to it in `function` gives a tensor (one step, without a walk)."""
        arguments = [(str(i), a) for i, a in enumerate(call.args) if not isinstance(a, ast.Starred)]
        arguments += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
        if not any(isinstance(a, (ast.Name, ast.Call, ast.BinOp)) for _, a in arguments):
            return ()
        probe = self._probe(function)
        return tuple(label for label, argument in arguments if self._is_tensor(argument, probe, function))

    def _probe(self, function: FunctionInfo) -> FunctionAnalysis:
        """Kinds of expressions with the parameters' annotations only (evidence from use would
        cost a walk of every function that calls another file)."""
        if id(function.node) not in self._probes:
            probe = FunctionAnalysis(self.module, function, with_parameters=False)
            args = function.node.args
            probe.env = {
                **probe.env,
                **{
                    a.arg: probe.annotation_kind(a.annotation)
                    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
                    if a.annotation is not None
                },
            }
            self._probes[id(function.node)] = probe
        return self._probes[id(function.node)]

    def _is_tensor(self, argument: ast.expr, probe: FunctionAnalysis, function: FunctionInfo) -> bool:
        if not isinstance(argument, ast.Name) or argument.id in function.parameter_names:
            return probe.kind(argument).is_tensor
        values = self.regions.assigned_values(function).get(argument.id, [])
        return bool(values) and all(probe.kind(value).is_tensor for value in values)

    def purity(self, function: FunctionInfo) -> tuple[str, str]:
        reason, caveat = function_verdict(function, FunctionAnalysis(self.module, None))
        return ("pure" if reason is None else reason), caveat or ""
