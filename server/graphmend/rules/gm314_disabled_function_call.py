from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import RelatedLocation, Severity
from ..inference import FunctionAnalysis
from ..regions.compiled import is_shallow
from ..source import Position, Range, SourceText
from ..torch_api import DISABLE_DECORATORS
from .base import Rule, RuleDocs

_DISABLED_CALL = "gb0098"  # "Skip calling `torch.compiler.disable()`d function"
_DISABLED_INLINE = "gb0099"  # "Skip inlining `torch.compiler.disable()`d function": a method, `recursive=False`
_DISABLE_IN_GRAPH = "gb0007"  # `torch._dynamo.disable(f)(x)` inside compiled code: the wrapper is skipped


class DisabledFunctionCall(Rule):
    """A call from compiled code to a function kept out of compilation."""

    docs = RuleDocs(
        what=(
            "flags a call, in compiled code, of a function of the project decorated with "
            "`@torch.compiler.disable` or `@torch._dynamo.disable` (a method too, and `recursive=False`), of a "
            "name the module binds to `torch.compiler.disable(f)`, and of `torch._dynamo.disable(f)` made inside "
            "compiled code. The message names the function and its line, and links the decorator. A function "
            "registered with `reorderable_logging_functions` or `ignore_logging_functions` as well (graphmend's "
            "own deferred messages) is replayed or dropped, not called in the graph, and is not flagged. Nothing "
            "inside a disabled function is reported: Dynamo never traces it (with `recursive=False`, the "
            "functions it calls do compile, and are checked)."
        ),
        why=(
            "Dynamo does not trace a disabled function: it ends the graph at each call, runs the function "
            'in Python and starts a new graph after it ("Skip calling `torch.compiler.disable()`d function", '
            'gb0098; "Skip inlining" for a method or `recursive=False`, gb0099). Wrapping a function with '
            "`disable` inside compiled code is a call Dynamo skips too "
            '("Attempted to call function marked as skipped", gb0007). Both are common workarounds whose '
            "cost (a break at every call, every step) is easy to miss."
        ),
        example=(
            "@torch.compiler.disable\ndef log_stats(x):\n    return x.mean()\n\n"
            "@torch.compile\ndef forward(x):\n    y = x * 2\n    stats = log_stats(y)\n    return y + stats"
        ),
        action="Let the function compile (remove `disable` and fix what it was hiding), or call it outside the compiled region.",
        fix=(
            "no automatic fix: `disable` is usually a workaround for something else in the function; "
            "graphmend reports that something once the decorator is gone."
        ),
    )

    code = "GM314"
    name = "disabled-function-call"
    message = "This call runs a function kept out of compilation, splitting the graph at every call; let it compile or call it outside the compiled region"
    severity = Severity.INFORMATION
    reason = "Skip calling `torch.compiler.disable()`d function"
    reason_id = _DISABLED_CALL
    also_reported_as = (_DISABLED_INLINE, _DISABLE_IN_GRAPH)
    fixable = False
    about_a_value = False  # the break comes from the call or statement, not from a tensor value
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if _disabled_in_graph(node, analysis) or _disabled_callee(node, analysis) else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        if _disabled_in_graph(reported, analysis):
            return _DISABLE_IN_GRAPH
        callee = _disabled_callee(reported, analysis)
        return _DISABLED_INLINE if callee is not None and callee.inlined else _DISABLED_CALL

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        callee = _disabled_callee(reported, analysis)
        if callee is None and not reported.args and not isinstance(reported.func, ast.Call):
            return (
                f"`{ast.unparse(reported.func)}()` called bare only makes a decorator, and Dynamo skips the call, "
                "splitting the graph; remove it, or decorate the function it was meant for"
            )
        if callee is None:
            return self.message
        return (
            f"This call runs `{callee.name}` ({callee.where}), kept out of compilation, splitting "
            "the graph at every call; let it compile or call it outside the compiled region"
        )

    def related_for(
        self, reported: ast.AST, analysis: FunctionAnalysis, source: SourceText
    ) -> tuple[RelatedLocation, ...]:
        assert isinstance(reported, ast.Call)
        callee = _disabled_callee(reported, analysis)
        if callee is None:
            return ()
        if callee.decorator is not None:
            place = source.node_range(callee.decorator)
        else:  # in another file: its `def` line
            place = Range(Position(callee.line - 1, 0), Position(callee.line - 1, 0))
        message = f"`{callee.name}` is kept out of compilation here: every call from compiled code splits the graph"
        return (RelatedLocation(place, message, callee.path, kind="cause"),)


@dataclass(frozen=True)
class _Callee:
    """A function decorated with `disable` that a call runs: in this file (its decorator) or another."""

    name: str
    line: int  # 1-based: the decorator here, the `def` in another file
    path: str | None = None
    decorator: ast.expr | None = None
    inlined: bool = False  # a method or `recursive=False`: Dynamo reports gb0099

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.path is None else f"{Path(self.path).name}:{self.line}"


def _disabled_in_graph(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`torch._dynamo.disable(f)(x)`: the wrapper made and called inside compiled code; and a bare
    `torch._dynamo.disable()`, which only makes a decorator: Dynamo skips that call too (measured on
    torch 2.13: gb0007 at its line)."""
    inner = call.func
    if isinstance(inner, ast.Call) and analysis.qualified_name(inner.func) in DISABLE_DECORATORS:
        return True
    return not call.args and analysis.qualified_name(inner) in DISABLE_DECORATORS


def _disabled_callee(call: ast.Call, analysis: FunctionAnalysis) -> _Callee | None:
    """The function decorated with `disable` (and not replayed) that the call runs: one of this
    file, or one of another file of the project (`ProjectContext.disabled_functions`)."""
    regions = analysis.module.regions
    scope = analysis.function
    if scope is None:
        return None
    callee = regions.resolve_call(call, scope) or regions.module_call_target(call, scope)
    if callee is not None:
        decorator = regions.disabled.get(id(callee.node))
        if decorator is None or id(callee.node) in regions.replayed:
            return None
        # Dynamo's words differ for a method or a shallow disable ("Skip inlining", gb0099)
        inlined = callee.owner is not None or is_shallow(decorator)
        return _Callee(callee.qualname, decorator.lineno, decorator=decorator, inlined=inlined)
    if isinstance(call.func, ast.Name):  # `c = torch.compiler.disable(c_impl)` at the top level
        values = regions.facts.assigned_values(None).get(call.func.id, [])
        wrapper = values[0] if len(values) == 1 and call.func.id not in scope.local_names else None
        if isinstance(wrapper, ast.Call) and analysis.qualified_name(wrapper.func) in DISABLE_DECORATORS:
            return _Callee(call.func.id, wrapper.lineno, decorator=wrapper)
    ref = regions.resolution.external_call(call, scope)
    found = regions.context.disabled_function(ref.target) if ref is not None and ref.kind == "call" else None
    return _Callee(ref.target.rsplit(".", 1)[-1], found[1], found[0]) if ref is not None and found else None
