"""A second break that one break causes: the call whose arguments it sits in.

Dynamo loads a method before its arguments. When an argument breaks the graph
(`h.masked_scatter(m, norm(h[m]))`), the resumed frame holds the bound method `h.masked_scatter`,
a builtin it cannot trace, so calling it breaks again, at the call's own line ("Attempted to call
function marked as skipped"; measured on torch 2.13: two break sites for one mask read). Fixing the
first removes both, so it is one finding; its related information (kind "resume") names the second
site, which a reader of Dynamo's log would otherwise take for another problem.
"""

from __future__ import annotations

import ast

from .diagnostics import Range, RelatedLocation
from .inference import FunctionAnalysis
from .semantics import ancestors
from .source import SourceText


def resumed_call_breaks(target: ast.AST, analysis: FunctionAnalysis, source: SourceText) -> tuple[RelatedLocation, ...]:
    """The tensor method calls that `target` is an argument of and that start on another line."""
    function = analysis.function
    line = getattr(target, "lineno", None)
    if function is None or line is None:
        return ()
    found = []
    chain = ancestors(target, function.node)
    calls = [
        call
        for child, call in zip(chain, chain[1:])
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and any(child is argument for argument in [*call.args, *call.keywords])
    ]
    for call in reversed(calls):  # the outermost first
        method = call.func
        assert isinstance(method, ast.Attribute)
        call_line = method.end_lineno or method.lineno
        if call_line == line or not (call.lineno <= line <= (call.end_lineno or call.lineno)):
            continue
        if not analysis.kind(method.value).is_tensor:
            continue
        start = source.position(call_line, (method.end_col_offset or 0) - len(method.attr.encode("utf-8")))
        end = source.position(call_line, method.end_col_offset or 0)
        found.append(
            RelatedLocation(
                Range(start, end),
                f"Dynamo breaks here too: it resumes after this break with `{ast.unparse(method)}` loaded "
                "but not called, a bound method it cannot trace",
                kind="resume",
            )
        )
    return tuple(found)
