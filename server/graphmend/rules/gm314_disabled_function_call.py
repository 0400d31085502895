from __future__ import annotations

import ast

from ..diagnostics import RelatedLocation, Severity
from ..inference import FunctionAnalysis
from ..semantics import FunctionInfo
from ..source import SourceText
from ..torch_api import DISABLE_DECORATORS
from .base import Rule, RuleDocs

_DISABLED_CALL = "gb0098"  # "Skip calling `torch.compiler.disable()`d function"
_DISABLE_IN_GRAPH = "gb0007"  # `torch._dynamo.disable(f)(x)` inside compiled code: the wrapper is skipped


class DisabledFunctionCall(Rule):
    """A call from compiled code to a function kept out of compilation."""

    docs = RuleDocs(
        what=(
            "flags a call, in compiled code, of a function of the same file decorated with "
            "`@torch.compiler.disable` or `@torch._dynamo.disable`, and a call of `torch._dynamo.disable(f)` "
            "(or `torch.compiler.disable(f)`) made inside compiled code. The message names the function and "
            "its line. A function registered with `reorderable_logging_functions` as well (graphmend's own "
            "deferred messages) is replayed after the graph, not called in it, and is not flagged."
        ),
        why=(
            "Dynamo does not trace a disabled function: it ends the graph at each call, runs the function "
            'in Python and starts a new graph after it ("Skip calling `torch.compiler.disable()`d function", '
            "gb0098). Wrapping a function with `disable` inside compiled code is a call Dynamo skips too "
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
    also_reported_as = (_DISABLE_IN_GRAPH,)
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if _disabled_in_graph(node, analysis) or _disabled_callee(node, analysis) else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        return _DISABLE_IN_GRAPH if _disabled_in_graph(reported, analysis) else _DISABLED_CALL

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        callee = _disabled_callee(reported, analysis)
        if callee is None:
            return self.message
        return (
            f"This call runs `{callee.qualname}` (line {callee.node.lineno}), kept out of compilation, splitting "
            "the graph at every call; let it compile or call it outside the compiled region"
        )

    def related_for(
        self, reported: ast.AST, analysis: FunctionAnalysis, source: SourceText
    ) -> tuple[RelatedLocation, ...]:
        assert isinstance(reported, ast.Call)
        callee = _disabled_callee(reported, analysis)
        if callee is None:
            return ()
        node = callee.node
        decorator = next(
            d
            for d in node.decorator_list
            if analysis.qualified_name(d.func if isinstance(d, ast.Call) else d) in DISABLE_DECORATORS
        )
        return (
            RelatedLocation(
                source.node_range(decorator),
                f"`{callee.qualname}` is kept out of compilation here: every call from compiled code splits the graph",
                kind="cause",
            ),
        )


def _disabled_in_graph(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`torch._dynamo.disable(f)(x)`: the wrapper made and called inside compiled code."""
    inner = call.func
    return isinstance(inner, ast.Call) and analysis.qualified_name(inner.func) in DISABLE_DECORATORS


def _disabled_callee(call: ast.Call, analysis: FunctionAnalysis) -> FunctionInfo | None:
    """The same-file function decorated with `disable` that the call runs (not a replayed one)."""
    regions = analysis.module.regions
    scope = analysis.function
    if scope is None:
        return None
    callee = regions.resolve_call(call, scope) or regions.module_call_target(call, scope)
    if callee is None or id(callee.node) not in regions.disabled or id(callee.node) in regions.replayed:
        return None
    return callee
