from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.deferral import defer_message
from ..inference import FunctionAnalysis
from ..messages import is_logging, passed_by_dynamo
from .base import Rule, RuleDocs


class LoggingCall(Rule):
    """Logging in compiled code."""

    docs = RuleDocs(
        what=(
            "flags logging in compiled code: `logging.warning(...)` and the other level "
            "functions of the stdlib `logging` module, and methods of loggers made by "
            "`logging.getLogger(...)` or Hugging Face's `transformers.utils.logging.get_logger(...)` "
            "(including `warning_once`), held in module-level names, locals or `self` attributes. A method "
            "the module registers at its top level with `torch._dynamo.config.ignore_logging_functions` (or "
            "`ignore_logger_methods`), for one logger (`logger.debug`) or for all (`logging.Logger.debug`), is "
            "not flagged: Dynamo drops those calls without a break."
        ),
        why=(
            "a logger call runs handlers, formatting and I/O that Dynamo does not "
            'trace ("logging.Logger method not supported for non-export cases"); it breaks the graph at the '
            "call."
        ),
        example=('logger = logging.getLogger(__name__)\n...\nlogger.warning("clamping %d values", n)'),
        action="Log after the compiled call returns.",
        fix=(
            "keep the record in the graph as an operator that keeps messages in order (torch >= 2.13), which builds it "
            "with the call's own file, line and function (GM204 keeps those right): the same text, level and "
            "order on every call, also where Dynamo inlines the function. `warning_once` is called as it is. "
            "Where the operator does not apply (an argument that is not a tensor, the `logging` module's "
            "functions), the record is deferred: in a function reached through a call that is refused (the "
            "record would be lost), elsewhere unsafe. `torch._dynamo.config.ignore_logging_functions` is not a "
            "fix: it drops the message. Always unsafe, with what changes named."
        ),
    )

    code = "GM202"
    name = "logging-in-compiled-code"
    message = "This logging call breaks the graph; defer it until after the compiled region"
    reason = "logging.Logger method not supported for non-export cases"
    reason_id = "gb0291"
    also_reported_as = ("gb4841",)
    node_types = (ast.Call,)

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        return defer_message(node, analysis, ctx)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if is_logging(node, analysis) and not passed_by_dynamo(node, analysis) else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        # Measured on torch 2.13.0: the module function `logging.warning(...)` breaks inside the
        # logging module on "Unsupported python_type() call" (gb4841), not on a Logger method.
        if isinstance(reported, ast.Call) and analysis.qualified_name(reported.func) is not None:
            return "gb4841"
        return self.reason_id
