"""A message's plan (print, logging, warnings): kept in the graph, or deferred until after it.

Where the target torch allows it (2.13 and newer), the call becomes a call of a small module-level
helper registered as an operator that keeps messages in order (`in_graph.py`): it runs inside the graph,
in order, also where Dynamo inlines the function (a submodule, `super().forward()`, a callback)
and under strict export. Elsewhere the helper is registered in
`torch.compiler.config.reorderable_logging_functions`: Dynamo records the call while tracing and
replays it after the graph has run, with the same text, level and order (measured on torch
2.13.0), but never replays one recorded in an inlined function, so that form names its hazards.
Run eagerly, either helper simply does the effect at once. The user's code gains no dependency on
graphmend: only torch and what the call already used. A helper per file, not a runtime module in
the user's project: it needs no import path that works for scripts, packages and notebooks alike,
and a reviewer sees the lines it adds.

Dynamo replays a call only if its arguments are tensors, constants or a lazy `str.format`, and it
drops keyword arguments (measured: a shape, a size, a tuple or an int that became dynamic breaks
as a plain argument, and defers inside `"...".format(...)`, formatted after the graph with real
values). So `print("loss:", t)` becomes `_deferred_print("loss:", t)`, its arguments as they were;
only an f-string, or a value that is neither a tensor nor a constant, is formatted. What either
form may change (recompiles on Python numbers, code that may raise after the message, tensors
changed in place later) is decided in `message_hazards.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from ..analysis.aliases import loop_nodes
from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis, is_logger_factory
from ..kinds import Kind
from ..messages import STDLIB_LEVEL_FUNCTIONS, is_logging, is_message, is_print, is_warning
from ..semantics import ancestors, walk
from .base import FixContext, Refusal, Refused, may_be_scripted
from .helpers import LEVEL, OPERATOR, Helper, helper_edit, resolved
from .in_graph import (
    IN_GRAPH_CHECKPOINT,
    IN_GRAPH_CHECKPOINT_EAGER,
    IN_GRAPH_CUDA_GRAPHS,
    IN_GRAPH_FAKE,
    IN_GRAPH_GRAD_FN,
    IN_GRAPH_RECORD_COPY,
    IN_GRAPH_SCRIPTED,
    IN_GRAPH_WARNING_AS_ERROR,
    plan_in_graph,
    plan_print,
    wrapper,
    written_once,
)
from .message_hazards import may_raise_after, mutated_later, mutated_reason, recompiles, refuse_mutated
from .message_text import (
    escaped,
    formatted_message,
    literal,
    may_be_tensor,
    message_values,
    template_part,
)

# Frames from a deferred helper's effect up to the line that called the helper: the helper and
# torch.compiler.disable's wrapper (one frame in torch 2.9.1, 2.13.0 and 2.14.1, eager and replayed).
_CALLER = "stacklevel=3"
LOST_IF_RAISES = "the message is lost if later code in the graph raises (Dynamo replays it after the graph)"


@dataclass
class Plan:
    """How one message call leaves the traced code: the function called instead (a deferred
    helper, or an in-graph operator), its arguments, and what makes it unsafe."""

    helper: Helper
    arguments: list[str] | None  # None: the call keeps its own argument text, only the callee changes
    title: str
    reasons: list[str]


# ---------------------------------------------------------------------- messages as templates
def _passed_as_is(node: ast.expr, analysis: FunctionAnalysis, ctx: FixContext, uncertain: list[str]) -> None:
    """An argument passed to a deferred call unformatted: Dynamo replays tensors and constants;
    a Python value defers only while it is a constant when traced (graphmend cannot know)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return
    kind = analysis.kind(node)
    if kind.is_tensor:
        return
    text = ctx.segment(node)
    is_shape = (isinstance(node, ast.Attribute) and node.attr == "shape") or (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    )
    if (
        is_shape
        or kind in (Kind.CONTAINER, Kind.LOGGER, Kind.SELF, Kind.NUMPY)
        or not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.Call))
    ):
        raise Refused(f"`{text}` is neither a tensor nor a constant, which Dynamo cannot defer")
    uncertain.append(text)


def _constant_keyword(call: ast.Call, name: str, default: str | None) -> str | None:
    keyword = next((k for k in call.keywords if k.arg == name), None)
    if keyword is None:
        return default
    if isinstance(keyword.value, ast.Constant) and (
        keyword.value.value is None or isinstance(keyword.value.value, str)
    ):
        return default if keyword.value.value is None else keyword.value.value
    raise Refused(f"`{name}=` is not a constant string")


# ---------------------------------------------------------------------- plans per kind of message
def plan_message(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext, in_branch: bool = False) -> Plan:
    """The plan for a print, logging or warnings call (raises Refused with the reason)."""
    if ctx.torch_name is None:
        raise Refused(ctx.no_torch_name)
    operator = None if in_branch else _plan_operator(call, analysis, ctx)
    if operator is not None:
        operator.reasons.extend(recompiles(call, analysis, ctx))
        return operator
    if is_print(call, analysis):
        plan = _plan_print(call, analysis, ctx)
    elif is_logging(call, analysis):
        plan = _plan_logging(call, analysis, ctx)
    elif is_warning(call, analysis):
        plan = _plan_warning(call, analysis, ctx)
    else:
        raise Refused("the call writes no message graphmend knows")
    if analysis.runs_inlined:  # Dynamo replays deferred calls only in the frame it compiles
        raise Refused(
            f"`{analysis.function.qualname if analysis.function else '?'}` runs inside compiled code that calls it, and "
            "Dynamo (torch 2.13) replays a deferred call only in the compiled frame itself: the message would be lost"
        )
    if may_raise_after(call, analysis):
        plan.reasons.append(LOST_IF_RAISES)
    plan.reasons.extend(recompiles(call, analysis, ctx))
    # Whether a function only ever runs as a compiled frame of its own is rarely knowable: a module
    # compiled here may also be a submodule elsewhere, or be called by a subclass.
    plan.reasons.extend(DEFERRED_HAZARDS)
    if any(may_be_tensor(v, analysis) for v in message_values(call, analysis)):
        plan.reasons.append(DEFERRED_GRAD_FN)
    if is_warning(call, analysis):
        plan.reasons.append(WARNING_AS_ERROR)
    if may_be_scripted(analysis):
        plan.reasons.append(NOT_SCRIPTABLE)
    return plan


def _plan_operator(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Plan | None:
    """The plan that keeps a logging or warnings call in the graph as an operator with an ordered
    effect (`in_graph`), which survives inlining and writes the values of its moment; None where
    that form does not apply, or where a message before it is deferred: written in the graph, it
    would come out before that one (the order holds when it is deferred too)."""
    if id(call) not in ctx.deciding_order:
        ctx.deciding_order.add(id(call))
        try:
            if _deferred_before(call, analysis, ctx):
                return None
        finally:
            ctx.deciding_order.discard(id(call))
    planned = _operator(call, analysis, ctx)
    if planned is None:
        return None
    helper, arguments, title = planned
    shows_tensors = arguments[-1 if is_warning(call, analysis) or is_print(call, analysis) else -2] != "[]"
    reasons = [IN_GRAPH_GRAD_FN] if shows_tensors else []
    reasons.extend((IN_GRAPH_CUDA_GRAPHS, IN_GRAPH_CHECKPOINT_EAGER, IN_GRAPH_FAKE))
    if not written_once(call, analysis):  # a message written once per process is written once either way
        reasons.append(IN_GRAPH_CHECKPOINT)
    if shows_tensors and is_logging(call, analysis) and arguments[-1] == "False":  # `%` arguments in the record
        reasons.append(IN_GRAPH_RECORD_COPY)
    if is_warning(call, analysis):
        reasons.append(IN_GRAPH_WARNING_AS_ERROR)
    if may_be_scripted(analysis):
        reasons.append(IN_GRAPH_SCRIPTED)
    nested = _nested_code(call, analysis)
    if nested is not None and is_logging(call, analysis):  # review 12's S1
        reasons.append(
            f"the log record's `funcName` was `{nested}` (Python names the lambda, and before 3.12 the comprehension, the call "
            "is written in); the operator's record names the function around it"
        )
    return Plan(helper, arguments, title, reasons)


_NESTED_NAMES = {
    ast.Lambda: "<lambda>",
    ast.ListComp: "<listcomp>",
    ast.SetComp: "<setcomp>",
    ast.DictComp: "<dictcomp>",
    ast.GeneratorExp: "<genexpr>",
}


def _nested_code(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The name Python gives the code object of the lambda or comprehension `call` is written in."""
    if analysis.function is None:
        return None
    for holder in ancestors(call, analysis.function.node)[1:]:
        name = _NESTED_NAMES.get(type(holder))
        if name is not None:
            return name
    return None


def _operator(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> tuple[Helper, list[str], str] | None:
    """The in-graph helper, arguments and title for the message (`in_graph`), None where that
    form does not apply."""
    if is_print(call, analysis):
        try:
            sep, end, stream = _print_form(call, analysis)
        except Refused:
            return None
        target = None if stream is None else _module_level_text(_stream_node(call), stream, ctx)
        planned = plan_print(call, analysis, ctx, sep, end, None if target is None else target[0])
        if planned is None or target is None or not target[1]:
            return planned
        helper, arguments, title = planned  # the stream's module, imported inside the helper
        return replace(helper, body=f"{target[1]}{helper.body}"), arguments, title
    owner = None
    if is_logging(call, analysis):
        if not isinstance(call.func, ast.Attribute) or not call.args:
            return None
        try:
            owner = _logger_owner(call.func.value, analysis, ctx)
        except Refused:
            return None
    return plan_in_graph(call, analysis, ctx, owner)


# What a deferral changes wherever the code may run (issue 50, measured on torch 2.13 and 2.14.1).
DEFERRED_HAZARDS = (
    "Dynamo drops the deferred message where compiled code calls this function (a submodule's forward, an "
    "`nn.Sequential`, `super().forward()`, `checkpoint`): it replays deferred calls only in the frame it "
    "compiles",
    "`torch.export(..., strict=True)` fails: it cannot trace the deferred helper, a `torch.compiler.disable` function",
)
DEFERRED_GRAD_FN = (
    "under the aot_eager and inductor backends a tensor that requires grad shows the compiled graph's "
    "`grad_fn=<CompiledFunctionBackward>` instead of its own"
)
WARNING_AS_ERROR = (
    "under warnings-as-errors it raises after the graph, keeping later changes (`-W error`: the module's state, "
    "in-place writes after the call)"
)
NOT_SCRIPTABLE = "torch.jit.script no longer compiles the function (TorchScript cannot compile the deferred helper)"


def _print_form(call: ast.Call, analysis: FunctionAnalysis) -> tuple[str, str, str | None]:
    """A print's separator, end and stream (the qualified name of `file=`, None for stdout);
    Refused for what no fix writes."""
    unknown = [k.arg for k in call.keywords if k.arg not in ("sep", "end", "file")]
    if unknown or any(isinstance(a, ast.Starred) for a in call.args):
        raise Refused("the call passes `*args` or keywords other than sep/end/file")
    sep = _constant_keyword(call, "sep", " ")
    end = _constant_keyword(call, "end", "\n")
    assert sep is not None and end is not None
    return sep, end, _print_stream(call, analysis)


def _plan_print(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Plan:
    """The deferral of a print (where the in-graph operator does not apply)."""
    sep, end, stream = _print_form(call, analysis)
    mutated = mutated_later(call, analysis)
    if mutated:
        raise Refused(mutated_reason(mutated))
    suffix = ("" if stream is None else f"_{stream.rsplit('.', 1)[-1]}") + ("" if end == "\n" else "_end")
    target = None if stream is None else _module_level_text(_stream_node(call), stream, ctx)
    keywords = ("" if end == "\n" else ", end=end") + ("" if target is None else f", file={target[0]}")
    body = f"{'' if target is None else target[1]}print(*values{keywords})"
    helper = Helper(f"_deferred_print{suffix}", "*values" if end == "\n" else "end, *values", body)
    arguments = _print_arguments(call, analysis, ctx, sep)
    title = "Defer the print until the compiled graph has run"
    if not call.keywords and arguments == [ctx.segment(a) for a in call.args]:
        return Plan(helper, None, title, [])  # only the name changes: the call keeps its layout
    return Plan(helper, ([] if end == "\n" else [literal(end)]) + arguments, title, [])


def _print_arguments(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext, sep: str) -> list[str]:
    """What the deferred print is passed: its own arguments where Dynamo replays them as they are
    (tensors, constants; an f-string as its lazy `str.format`), else one formatted message (a
    shape, a number that may be dynamic, or a separator other than a space)."""
    if sep == " " and all(isinstance(a, ast.JoinedStr) or _replayed_as_is(a, analysis, ctx) for a in call.args):
        return [
            _formatted_text(a, analysis, ctx) if isinstance(a, ast.JoinedStr) else ctx.segment(a) for a in call.args
        ]
    values: list[str] = []
    template = escaped(sep).join(
        template_part(a, analysis, values, ctx, "{}" if analysis.kind(a) is Kind.PYTHON else "{!s}") for a in call.args
    )
    return [formatted_message(template, values)]


def _formatted_text(fstring: ast.JoinedStr, analysis: FunctionAnalysis, ctx: FixContext) -> str:
    values: list[str] = []
    return formatted_message(template_part(fstring, analysis, values, ctx, "{!s}"), values)


def _replayed_as_is(node: ast.expr, analysis: FunctionAnalysis, ctx: FixContext) -> bool:
    """A value Dynamo replays unformatted: a tensor, a literal, or a module-level name bound once
    to a string or number literal."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, int, float, bool, type(None)))
    if analysis.kind(node).is_tensor:
        return True
    if not isinstance(node, ast.Name) or node.id in analysis.shadowed_names:
        return False
    binding = ctx.top_level_bindings.get(node.id)
    return (
        isinstance(binding, ast.Assign)
        and len(binding.targets) == 1
        and isinstance(binding.targets[0], ast.Name)
        and isinstance(binding.value, ast.Constant)
        and isinstance(binding.value.value, (str, int, float))
        and node.id not in ctx.index.declared_global
    )


def _module_level_text(node: ast.expr, qualname: str, ctx: FixContext) -> tuple[str, str]:
    """How a module-level helper names what the call names with `node` (`stderr` after `from sys
    import stderr`: the object bound at import, as the call used it), and the import line its body
    needs first ("" when the file's own module-level import serves): the module imported inside the
    helper when the file imports it only inside functions."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and isinstance(ctx.top_level_bindings.get(root.id), (ast.Import, ast.ImportFrom)):
        return ctx.segment(node), ""
    module = qualname.split(".", 1)[0]
    return qualname, f"import {module}\n"


def _stream_node(call: ast.Call) -> ast.expr:
    return next(k.value for k in call.keywords if k.arg == "file")


def _goes_in_graph(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> bool:
    """Whether this message is written inside the graph as an operator (given the messages before
    it), without writing it: what the order of a function's messages depends on."""
    return _plan_operator(call, analysis, ctx) is not None


def _deferred_before(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> list[int]:
    """Lines of the function's messages that are deferred and run before `call` (earlier, or in a
    loop around it). Dynamo replays deferred messages after the graph, so a print inside the graph
    would come out before them. A message inside an `if` on a tensor counts as deferred: predicated,
    it is (an `if` Python decides while tracing is traced through, its messages planned as any other)."""
    if analysis.function is None or analysis.runs_inlined:  # there a message goes in the graph or is not fixed
        return []
    function = analysis.function.node
    messages = sorted(
        (n for n in walk(function) if isinstance(n, ast.Call) and n is not call and is_message(n, analysis)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    in_loops = loop_nodes(function, call)
    in_branches = {
        id(node)
        for branch in walk(function)
        if isinstance(branch, ast.If) and analysis.is_data_dependent(branch.test)
        for statement in [*branch.body, *branch.orelse]
        for node in walk(statement)
    }
    deferred: list[int] = []
    for message in messages:
        if message.lineno > call.lineno and id(message) not in in_loops:
            continue
        if id(message) in in_branches or not _goes_in_graph(message, analysis, ctx):
            deferred.append(message.lineno)
    return deferred


def _print_stream(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    keyword = next((k for k in call.keywords if k.arg == "file"), None)
    if keyword is None or (isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
        return None
    qualname = analysis.qualified_name(keyword.value)
    if qualname in ("sys.stdout", "sys.stderr"):
        return qualname
    raise Refused("`file=` is not sys.stdout or sys.stderr")


def _plan_logging(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Plan:
    func = call.func
    if not isinstance(func, ast.Attribute):
        raise Refused("the logging function is imported by name; call it through its module or logger")
    method = func.attr
    owner, base, standard = _logger_owner(func.value, analysis, ctx)
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        raise Refused("the call passes keywords or `*args` (e.g. exc_info, extra)")
    if not call.args:
        raise Refused("the call has no message")
    refuse_mutated(call, analysis)
    reasons = []
    if standard and method in STDLIB_LEVEL_FUNCTIONS:
        # The record names the user's line, as the call did.
        body = f"{owner}.{method}(*args, {_CALLER})"
        reasons.append(_RECORD_LINE_UNDER_COMPILE)
    else:
        body = f"{owner}.{method}(*args)"
        if method in STDLIB_LEVEL_FUNCTIONS:
            reasons.append("the log record names the helper (`funcName`, `lineno`) instead of this line")
    helper = Helper(f"_deferred_{base}_{method}", "*args", body)
    title = f"Defer `{ctx.segment(func)}` until the compiled graph has run"
    message, rest = call.args[0], call.args[1:]
    if isinstance(message, ast.JoinedStr) and not rest:
        values: list[str] = []
        template = template_part(message, analysis, values, ctx, "{!s}")
        return Plan(helper, [formatted_message(template, values)], title, reasons)
    uncertain: list[str] = []
    for argument in call.args:
        _passed_as_is(argument, analysis, ctx, uncertain)
    if uncertain:
        names = ", ".join(f"`{v}`" for v in dict.fromkeys(uncertain))
        reasons.append(f"{names} must be constant when traced for Dynamo to defer the call")
    return Plan(helper, None, title, reasons)  # the arguments keep their text and layout


_RECORD_LINE_UNDER_COMPILE = "under torch.compile the log record's `lineno` is the `def` line"
# Loggers whose level methods are `logging.Logger`'s own, so `stacklevel` counts as in the stdlib.
_STANDARD_LOGGER_FACTORIES = frozenset(
    {
        "logging.getLogger",
        "transformers.utils.logging.get_logger",
        "transformers.logging.get_logger",
        "diffusers.utils.logging.get_logger",
        "diffusers.logging.get_logger",
    }
)


def _logger_owner(receiver: ast.expr, analysis: FunctionAnalysis, ctx: FixContext) -> tuple[str, str, bool]:
    """How a module-level helper reaches the same logger: its module-level name, the `logging`
    module, or (`self.log = logging.getLogger("m")` in `__init__`) the same factory call, which
    returns the same logger object every time; and whether it is a `logging.Logger` (or the
    `logging` module), whose methods take `stacklevel` as the stdlib counts it."""
    if isinstance(receiver, ast.Name):
        if receiver.id in analysis.shadowed_names:
            raise Refused(
                "the logger is a local variable; only module-level loggers and `self` loggers made in `__init__` can be deferred"
            )
        if analysis.qualified_name(receiver) == "logging":
            return receiver.id, receiver.id, True
        if analysis.module.module_env.get(receiver.id) is Kind.LOGGER:
            return (
                receiver.id,
                receiver.id,
                _made_by_standard_factory(ctx.top_level_bindings.get(receiver.id), analysis),
            )
        raise Refused("only module-level loggers and the logging module can be deferred")
    if isinstance(receiver, ast.Attribute) and analysis.is_self(receiver.value):
        factory = _logger_factory_text(receiver.attr, analysis, ctx)
        if factory is not None:
            text, qualname = factory
            return text, f"{receiver.attr.lstrip('_')}", qualname in _STANDARD_LOGGER_FACTORIES
    raise Refused("the logger is an attribute or expression whose logger graphmend cannot name from module level")


def _made_by_standard_factory(binding: ast.stmt | None, analysis: FunctionAnalysis) -> bool:
    """`logger = logging.getLogger(...)` (or transformers' `get_logger`) at module level."""
    if not isinstance(binding, ast.Assign) or not isinstance(binding.value, ast.Call):
        return False
    return analysis.index.qualified_name(binding.value.func) in _STANDARD_LOGGER_FACTORIES


def _logger_factory_text(attribute: str, analysis: FunctionAnalysis, ctx: FixContext) -> tuple[str, str] | None:
    """The text of `logging.getLogger("m")` and the factory's qualified name when `__init__` sets
    `self.<attribute>` to exactly that (a factory with constant or `__name__` arguments, reachable
    by the same name at module level), else None."""
    owner = analysis.owner
    if owner is None:
        return None
    values = analysis.module.init_values(owner).get(attribute, [])
    if len(values) != 1 or not isinstance(values[0][1], ast.Call):
        return None
    init, value = values[0]
    assert isinstance(value, ast.Call)
    constant_arguments = all(
        (isinstance(a, ast.Constant) and isinstance(a.value, str)) or (isinstance(a, ast.Name) and a.id == "__name__")
        for a in value.args
    )
    if (
        value.keywords
        or not constant_arguments
        or not is_logger_factory(analysis.index.qualified_name(value.func, init.local_names))
    ):
        return None
    qualname = analysis.index.qualified_name(value.func)
    if qualname is None:
        return None  # the factory is not reachable under that name at module level
    return ctx.segment(value), qualname


def _plan_warning(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Plan:
    if call.keywords and any(k.arg != "category" for k in call.keywords):
        raise Refused("the call passes keywords other than category (e.g. stacklevel)")
    arguments_in = list(call.args)
    category_node = next((k.value for k in call.keywords if k.arg == "category"), None)
    if len(arguments_in) == 2 and category_node is None:
        category_node = arguments_in.pop()
    if len(arguments_in) != 1:
        raise Refused("the call does not have exactly one message")
    category = "UserWarning"
    if category_node is not None:
        if not isinstance(category_node, ast.Name) or category_node.id in analysis.shadowed_names:
            raise Refused("the category is not a module-level or builtin name")
        category = category_node.id
    message = arguments_in[0]
    if isinstance(message, ast.Call) and isinstance(message.func, ast.Name) and message.func.id.endswith("Warning"):
        raise Refused("the message is a warning instance, whose category a deferred call would not keep")
    if _replayed_as_is(message, analysis, ctx) and not analysis.kind(message).is_tensor:
        argument = ctx.segment(message)
    else:
        values: list[str] = []
        argument = formatted_message(template_part(message, analysis, values, ctx, "{!s}"), values)
    # The warning keeps the user's file, line, module and once-per-location registry.
    passed = "" if category == "UserWarning" else f"{category}, "
    callee, imported = _module_level_text(call.func, "warnings.warn", ctx)
    warn = f"{imported}{callee}(message, {passed}{_CALLER})"
    suffix = "" if category == "UserWarning" else f"_{category}"
    helper = Helper(f"_deferred_warn{suffix}", "message", warn)
    reasons = [
        "the warning's location becomes the `def` line, also for once-per-location filters (Dynamo replays it "
        "from the frame's start)"
    ]
    refuse_mutated(call, analysis)
    return Plan(helper, [argument], "Defer the warning until the compiled graph has run", reasons)


# ---------------------------------------------------------------------- fixes
def defer_message(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """The fix for a print, logging or warnings call: the call is replaced, the helper defined."""
    try:
        plan = plan_message(call, analysis, ctx)
    except Refused as refusal:
        return Refusal(refusal.reason)
    torch_name = ctx.torch_name
    assert torch_name is not None
    edits: list[TextEdit] = []
    helper = plan.helper
    if helper.kind == OPERATOR:
        wrapper_name, wrapper_edit = helper_edit(wrapper(torch_name), ctx, torch_name)
        callee, insertion = helper_edit(helper, ctx, torch_name, wrapper_name)
        edits.extend(e for e in (wrapper_edit, insertion) if e is not None)
        if helper.parameters.startswith("line:"):
            # The line the call will be on once the helpers above it are in (GM204 keeps it so).
            line = call.lineno + sum(e.new_text.count("\n") for e in edits if e.range.start.line < call.lineno - 1)
            assert plan.arguments is not None
            plan = Plan(helper, [str(line), *plan.arguments], plan.title, plan.reasons)
    else:
        callee, insertion = helper_edit(helper, ctx, torch_name)
        if insertion is not None:
            edits.append(insertion)
    if plan.arguments is None:  # keep the call's own argument text and layout
        edits.append(TextEdit(ctx.source.node_range(call.func), callee))
    else:
        edits.append(TextEdit(ctx.source.node_range(call), f"{callee}({', '.join(plan.arguments)})"))
    anchored = helper.kind == OPERATOR and helper.parameters.startswith("line:")
    if plan.reasons:
        return Fix(plan.title, Applicability.UNSAFE, tuple(edits), tuple(plan.reasons), anchored)
    return Fix(plan.title, Applicability.SAFE, tuple(edits), names_its_line=anchored)


def message_in_branch(
    call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext
) -> tuple[str, list[str], list[TextEdit], list[str]]:
    """A message call inside a branch that now always runs becomes `<helper>_if(when, args)`, which
    replays the message only when the branch would have run: (that helper's name, the arguments'
    text, the edits defining the helpers, the unsafe reasons). The caller supplies `when`."""
    torch_name = ctx.torch_name
    operator = _plan_operator(call, analysis, ctx) if torch_name is not None else None
    if operator is not None and torch_name is not None:
        return _operator_in_branch(call, operator, analysis, ctx, torch_name)
    plan = plan_message(call, analysis, ctx, in_branch=True)
    assert torch_name is not None and plan.helper is not None
    # The effect itself under `if when:`, not a call of the plain helper: a warning's or log
    # record's `stacklevel` counts the frames up to the user's line.
    body = "\n".join(LEVEL + line for line in plan.helper.body.split("\n"))
    base, _ = resolved(plan.helper, ctx)  # `_deferred_print_2_if` where the file has another `_deferred_print`
    guarded = Helper(f"{base}_if", f"when, {plan.helper.parameters}", f"if when:\n{body}")
    name, insertion = helper_edit(guarded, ctx, torch_name)
    arguments = plan.arguments if plan.arguments is not None else [ctx.segment(a) for a in call.args]
    return name, arguments, [] if insertion is None else [insertion], plan.reasons


def _operator_in_branch(
    call: ast.Call, operator: Plan, analysis: FunctionAnalysis, ctx: FixContext, torch_name: str
) -> tuple[str, list[str], list[TextEdit], list[str]]:
    """`message_in_branch` for a message the graph keeps: its operator's `_if` twin, which takes the
    branch's condition first and writes the message only where it holds."""
    base = operator.helper
    body = "\n".join(LEVEL + line for line in base.body.split("\n"))
    guarded = replace(
        base,
        name=f"{base.name}_if",
        parameters=f"when: {torch_name}.Tensor, {base.parameters}",
        body=f"if when:\n{body}",
    )
    wrapper_name, wrapper_edit = helper_edit(wrapper(torch_name), ctx, torch_name)
    name, insertion = helper_edit(guarded, ctx, torch_name, wrapper_name)
    edits = [e for e in (wrapper_edit, insertion) if e is not None]
    assert operator.arguments is not None
    line = [str(call.lineno)] if base.parameters.startswith("line:") else []  # GM204 keeps it right
    return name, [*line, *operator.arguments], edits, [*operator.reasons, *recompiles(call, analysis, ctx)]


def predicated_helper(base: str, ctx: FixContext, torch_name: str) -> tuple[str, TextEdit | None]:
    """`<base>_when(when, *args)`: replays the user's registered `<base>(*args)` only if the tensor
    `when` is true, so a deferred call from inside a branch still runs only when that branch would.
    (Not `_if`, which graphmend's own message helpers end in: one fix may write both.)"""
    return helper_edit(Helper(f"{base}_when", "when, *args", f"if when:\n{LEVEL}{base}(*args)"), ctx, torch_name)
