from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import UNTRACEABLE_CALLS, traced_on
from .base import Rule, RuleDocs


def untraceable_callee(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The qualified name of a standard-library function Dynamo cannot trace, resolved through
    imports and aliases (`from time import perf_counter`); the builtin `open` unless shadowed."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        return "builtins.open" if analysis.is_builtin("open") else None
    qualname = analysis.qualified_name(func)
    if qualname not in UNTRACEABLE_CALLS:
        return None
    return None if traced_on(qualname, analysis.module.torch_version) else qualname


class UntraceableCall(Rule):
    """A standard-library call Dynamo cannot trace (clocks, `random`, file and stream I/O)."""

    docs = RuleDocs(
        what=(
            "flags calls in compiled code of standard-library functions that Dynamo cannot "
            "trace: clocks (`time.time()`, `time.perf_counter()`...), Python's `random` module (`random.random()`, "
            "`random.choice(...)`, `random.shuffle(...)`...), `datetime.datetime.now()`, `open(...)` and writes to "
            "`sys.stdout`/`sys.stderr`. The table, each entry measured on torch 2.13.0, is `UNTRACEABLE_CALLS`; "
            "`random.seed` traces from torch 2.14 (`torch-version`, `TRACEABLE_SINCE`)."
        ),
        why=(
            'they are C builtins or methods Dynamo has no rule for: "Attempted to call '
            'function marked as skipped" (gb0007), "Unsupported method call" (gb0156), "Failed to trace builtin '
            'operator" (gb0059, `open`). `random.randint`, `random.uniform` and `os.getenv` do trace.'
        ),
        example=("start = time.perf_counter()\nh = self.layer(x)\nself.elapsed = time.perf_counter() - start"),
        action="Read the clock, `random` or the file before the compiled call and pass the value in.",
        fix=(
            "no rewrite keeps the behaviour: a clock read inside the graph would run once "
            "at trace time, and `torch.rand` draws from another stream than `random`. Take the time or the "
            "random value outside the compiled region and pass it in (a tensor, so that it does not recompile)."
        ),
    )

    code = "GM307"
    name = "untraceable-stdlib-call"
    message = "Dynamo cannot trace this clock, `random` or I/O call; call it outside the compiled region"
    severity = Severity.INFORMATION
    reason = "Attempted to call function marked as skipped"
    reason_id = "gb0007"
    also_reported_as = ("gb0156", "gb0059")
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if untraceable_callee(node, analysis) is not None else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        return UNTRACEABLE_CALLS.get(untraceable_callee(reported, analysis) or "", self.reason_id)
