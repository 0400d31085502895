"""Calls that write a message — print, logging, warnings — decided by bindings, not by names.

The rules that flag them (GM201–GM203) and the rewrites that must know whether a statement only
writes a message (a loop gate keeps such a call; it then also runs for a skipped layer) share
these predicates.
"""

from __future__ import annotations

import ast

from .inference import FunctionAnalysis
from .kinds import Kind
from .message_sets import message_sets
from .torch_api import breaks_on

STDLIB_LEVEL_FUNCTIONS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
LOGGER_METHODS = STDLIB_LEVEL_FUNCTIONS | frozenset({"warning_once", "info_once", "warning_advice"})
WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


def is_print(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "print" and analysis.is_builtin("print"):
        return True
    return analysis.qualified_name(func) == "builtins.print"


def is_logging(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`logging.warning(...)` and the other level functions, or a method of a known logger."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        module, _, attr = qualname.rpartition(".")
        return module == "logging" and attr in STDLIB_LEVEL_FUNCTIONS
    return isinstance(func, ast.Attribute) and func.attr in LOGGER_METHODS and analysis.kind(func.value) is Kind.LOGGER


def is_warning(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    return analysis.qualified_name(call.func) in WARN_FUNCTIONS


def is_message(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    return is_print(call, analysis) or is_logging(call, analysis) or is_warning(call, analysis)


def registrations(analysis: FunctionAnalysis) -> dict[str, frozenset[str]]:
    """The functions Dynamo replays ("replayed") or drops ("dropped") where this function compiles:
    what the module's top level registers, and what a config patch around its compile sets
    (`with torch._dynamo.config.patch(reorderable_logging_functions={print}):`, the entry's captures)."""
    registered = message_sets(analysis.index).registered
    patched = [capture.partition(":") for capture in analysis.captures if ":" in capture]
    if not patched:
        return registered
    return {kind: names | {name for how, _, name in patched if how == kind} for kind, names in registered.items()}


def passed_by_dynamo(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A message call the module has told Dynamo to pass over without a break
    (`message_sets`): a function it drops, or one it replays after the graph
    called with what Dynamo can replay (measured on torch 2.13.0: constants, f-strings and tensors,
    keywords with constant values; a shape, a list, a warning category or `file=` still break; torch
    2.14.1 replays no call with a keyword)."""
    registered = registrations(analysis)
    if not registered["replayed"] and not registered["dropped"]:
        return False
    func = call.func
    qualname = analysis.qualified_name(func)
    names = {"builtins.print"} if is_print(call, analysis) else {qualname}
    if qualname is None and isinstance(func, ast.Attribute) and is_logging(call, analysis):  # a logger's method
        names.add(f"logging.Logger.{func.attr}")
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id not in analysis.shadowed_names:
            names.add(f"{receiver.id}.{func.attr}")
    if names & registered["dropped"]:
        return True
    keywords_replayed = not call.keywords or not breaks_on(
        "replayed message with a keyword", analysis.module.torch_version
    )
    replayable = (
        all(_replayable(a, analysis) for a in call.args)
        and keywords_replayed
        and all(k.arg is not None and isinstance(k.value, ast.Constant) for k in call.keywords)
    )
    return replayable and bool(names & registered["replayed"])


def _replayable(argument: ast.expr, analysis: FunctionAnalysis) -> bool:
    if isinstance(argument, (ast.Constant, ast.JoinedStr)):
        return True
    return isinstance(argument, ast.Name) and analysis.kind(argument).is_tensor


def is_replayed(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A call of a module-level function registered as reorderable: a message already deferred."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id in analysis.shadowed_names:
        return False
    function = analysis.index.functions.get(func.id)
    return function is not None and id(function.node) in analysis.module.regions.replayed
