"""Prints, logging and warnings kept in the graph: the message becomes a custom operator that writes
a shared token, so every message stays in order (issue 50; the token since issue 67).

A deferred message is replayed after the graph only where Dynamo compiles the function as a frame
of its own: where compiled code calls it instead (a submodule's `forward`, an `nn.Sequential`,
`super().forward()`, `checkpoint`) Dynamo drops it (`tx.debug_locals` of an inlining translator are
never replayed; torch 2.13 and 2.14.1). Whether a function only ever runs as its own frame is
rarely knowable. A custom operator survives inlining: it is a node of the graph, run on every call
at its place among the graph's other messages, with the values of that moment (measured on torch
2.13.0 and 2.14.1: eager, aot_eager and inductor, forward and backward,
`benchmarks/inlined_messages.py`; 2.9.1's inductor drops it under `no_grad`, so older releases get
the deferral). `torch._higher_order_ops.print` fails under `checkpoint` in training; an operator
with an ordered effect (issue 50's form) fails where models train (`benchmarks/message_contexts.py`:
compiled DDP, inductor's FX graph cache, a fused kernel before it), the token form does not.

The file gains one wrapper that makes a function such an operator, once per process, and one
helper per print stream, logger method or warning category. The call passes what the record needs and the
graph cannot compute: the call's line and function (the wrapper's record is built by hand with
`Logger.makeRecord`, so it names the user's line, not the helper's), the message, and its tensor
values; an f-string is passed as its `str.format` template:

    logger.warning("inner sum %s", y.sum())
    →  _logger_warning_in_graph(41, "forward", "inner sum %s", [y.sum()], False)

GM204 keeps the line and function right when the code around them moves. Where this form does not
apply (a value that is neither a tensor nor a constant, the `logging` module's functions, a
notebook, code recorded as CUDA graphs), the message is deferred as before.
"""

from __future__ import annotations

import ast

from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_logging, is_warning
from ..semantics import once_per_module, walk
from .base import FixContext, Refused
from .helpers import LEVEL, OPERATOR, OPERATOR_DOCSTRING, PLAIN, Helper
from .message_text import configured, literal, template_part


def _wrapper_body(torch_name: str) -> str:
    """Registers `body` once per process and module (a reloaded module reuses its operator:
    registered again, torch 2.14.1 fails to trace it) as a custom operator that writes a shared
    token, an empty tensor: every message kept in a graph writes the same one, so they run in
    order, as writes to one tensor do, and no operator is dropped as dead code. Measured on torch
    2.13.0 and 2.14.1 (`benchmarks/message_contexts.py`), the operator holds where the ordered-effect
    form of issue 50 did not: under compiled DDP (DDPOptimizer split the graph at the effect token),
    with inductor's FX graph cache (it cannot cache `with_effects`), after a fused kernel under
    inductor (a call without a tensor had no device, and inductor freed a buffer before the kernel
    that used it: UnboundLocalError), and with a name that is the same in every process (`hash()` is
    not). Only while Dynamo traces is the operator called: elsewhere `body` runs in Python, as the
    original did (eager, FakeTensorMode and the meta device, `torch.func` transforms,
    `torch.fx.symbolic_trace`, non-strict export); under strict export nothing, as Dynamo drops the
    original; and where Dynamo runs a frame eagerly, `call` is never compiled as a frame of its own
    (`skip_code`). Where that cannot hold, `body` itself is used, which breaks the graph as the
    original did: a torch older than `OPERATOR_RELEASE` (2.9.1's inductor dropped the operator under
    `no_grad`), or one whose names moved."""
    ops = f"{torch_name}.ops.in_graph_messages"
    release = ".".join(map(str, OPERATOR_RELEASE))
    return (
        f'if {torch_name}.__version__ < "{release}":  # an older release drops the operator from some graphs\n'
        f"{LEVEL}return body\n"
        "import zlib\n"
        "\n"
        "# one per helper and module, the same in every process\n"
        "name = f\"{body.__name__.strip('_')}_{zlib.crc32(f'{__name__}:{body.__code__.co_filename}'.encode()):08x}\"\n"
        "try:\n"
        f"{LEVEL}if not hasattr({ops}, name):\n"
        "\n"
        f"{LEVEL}{LEVEL}def run(token, *args):  # a copy of a tensor a compiled graph may reuse the memory of\n"
        f"{LEVEL}{LEVEL}{LEVEL}body(*([v if v.requires_grad else v.clone() for v in a] if isinstance(a, list) else a for a in args))\n"
        "\n"
        f'{LEVEL}{LEVEL}schema = {torch_name}.library.infer_schema(body, mutates_args=()).replace("(", "(Tensor(a!) token, ", 1)\n'
        f'{LEVEL}{LEVEL}operator = {torch_name}.library.custom_op(f"in_graph_messages::{{name}}", run, mutates_args=("token",), schema=schema)\n'
        f"{LEVEL}{LEVEL}operator.register_fake(lambda *args: None)\n"
        f'{LEVEL}token = vars({ops}).setdefault("token", {torch_name}.empty(0))  # one for every message: they stay in order\n'
        f"{LEVEL}skip_code = {torch_name}._dynamo.eval_frame.skip_code\n"
        "except (AttributeError, RuntimeError, TypeError, ValueError):  # a release whose names moved\n"
        f"{LEVEL}return body\n"
        f"operator = getattr({ops}, name)\n"
        f"plain = {torch_name}.compiler.disable(body)\n"
        "\n"
        "def call(*args):\n"
        f"{LEVEL}if not {torch_name}.compiler.is_dynamo_compiling():\n"
        f"{LEVEL}{LEVEL}return plain(*args)  # in Python, as the original: eager, fake and meta tensors, torch.func, fx\n"
        f"{LEVEL}if not {torch_name}.compiler.is_exporting():  # strict export drops the message, as it drops the original\n"
        f"{LEVEL}{LEVEL}operator(token, *args)\n"
        f"{LEVEL}return None\n"
        "\n"
        "skip_code(call.__code__)  # a frame Dynamo runs eagerly calls it in Python, not as a compiled frame\n"
        "return call"
    )


# The oldest release the operator form holds on (`benchmarks/inlined_messages.py`): 2.13.0 and 2.14.1
# keep it on every backend; 2.9.1's inductor drops it from a graph compiled without autograd (under
# `no_grad`, measured); 2.10 to 2.12 were not measured.
OPERATOR_RELEASE = (2, 13)
WRAPPER_DOCSTRING = (
    "`body` as an operator that torch.compile keeps in its graph, in order with its other effects (`body` itself "
    "where that cannot hold)."
)
# The file the record or warning names: the module's, as its code was compiled (`exec`'d code has
# no `__file__`).
_FILE = 'globals().get("__file__", "<string>")'
LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "critical": 50, "fatal": 50}
LEVEL_NAMES = {10: "DEBUG", 20: "INFO", 30: "WARNING", 40: "ERROR", 50: "CRITICAL"}
# Methods of transformers' and diffusers' loggers that log once per message: called as they are,
# their record names their own line before and after.
_ONCE_METHODS = frozenset({"warning_once", "info_once"})

IN_GRAPH_GRAD_FN = (
    "under the aot_eager and inductor backends a tensor that requires grad is written without its `grad_fn=`"
)
IN_GRAPH_WARNING_AS_ERROR = (
    "under warnings-as-errors the error is raised inside the compiled graph, where the backend decides which of "
    "the graph's in-place changes were already made"
)
IN_GRAPH_SCRIPTED = (
    "torch.jit.script no longer compiles the function: TorchScript cannot compile the in-graph helper it calls"
)
IN_GRAPH_CUDA_GRAPHS = (
    'under CUDA graphs (`mode="reduce-overhead"`) the graph that holds the message is not recorded as a CUDA graph: '
    "it writes the CPU tensor that keeps the messages in order (a graph that holds a CPU tensor is skipped), so it "
    "runs without CUDA graphs, where the original's graphs around the break were recorded (not measured on a GPU)"
)
IN_GRAPH_CHECKPOINT = (
    "under `torch.utils.checkpoint` the message is written when the forward runs, not again when it is recomputed "
    "for the backward, as the original is"
)
IN_GRAPH_CHECKPOINT_EAGER = (
    'with `backend="eager"` a non-reentrant `checkpoint` raises in the backward: the checkpoint saves the CPU '
    "tensor that keeps the messages in order, and the message writes it "
    "(aot_eager and inductor run it, measured on torch 2.13)"
)
IN_GRAPH_FAKE = (
    "on fake or meta tensors, compiled, nothing is written (FakeTensorMode, the meta device): the operator's fake "
    "kernel writes nothing (uncompiled, the message is written as before)"
)
IN_GRAPH_RECORD_COPY = (
    "the log record holds a copy of each tensor made at the call, not the tensor itself: a handler that formats "
    "records later (`MemoryHandler`, pytest's `caplog`) shows the value at the call, not after a later in-place change"
)


def _available(analysis: FunctionAnalysis, ctx: FixContext) -> str | None:
    """The name torch is written with, where the operator form applies: not in a notebook (no file
    to name, lines counted across cells), not in code recorded as CUDA graphs (a replay runs no
    Python), not for a torch older than `OPERATOR_RELEASE`."""
    torch_name = ctx.torch_name
    if torch_name is None or ctx.notebook or ctx.cuda_graph_scope(analysis.entry) is not None:
        return None
    if ctx.torch_version is not None and ctx.torch_version < OPERATOR_RELEASE:
        return None
    return torch_name


def written_once(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A logger method that writes each message text once per process (`warning_once`)."""
    return isinstance(call.func, ast.Attribute) and call.func.attr in _ONCE_METHODS and is_logging(call, analysis)


def wrapper(torch_name: str) -> Helper:
    """The file's function that makes a message helper an operator kept in the graph, in order."""
    return Helper("_in_graph", "body", _wrapper_body(torch_name), PLAIN, docstring=WRAPPER_DOCSTRING)


def plan_in_graph(
    call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext, owner: tuple[str, str, bool] | None
) -> tuple[Helper, list[str], str] | None:
    """The helper, the call's arguments after its line, and the fix's title for keeping a logging
    (`owner`: how the helper reaches the logger, its base name, whether it is a `logging.Logger`)
    or warnings call in the graph; None where this form does not apply (the message is deferred)."""
    torch_name = _available(analysis, ctx)
    function = analysis.function
    if torch_name is None or function is None:
        return None
    try:
        if is_logging(call, analysis) and owner is not None:
            return _plan_logging(call, analysis, ctx, owner, function.node.name, torch_name)
        if is_warning(call, analysis):
            return _plan_warning(call, analysis, ctx, function.node.name, torch_name)
    except Refused:
        return None
    return None


def _plan_logging(
    call: ast.Call,
    analysis: FunctionAnalysis,
    ctx: FixContext,
    owner: tuple[str, str, bool],
    function: str,
    torch_name: str,
) -> tuple[Helper, list[str], str]:
    assert isinstance(call.func, ast.Attribute)
    method = call.func.attr
    logger, base, standard = owner
    if logger == "logging" or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        raise Refused("the module's functions, keywords and `*args` are deferred")
    message, values, braces = _message(call.args[0], call.args[1:], analysis, ctx)
    parameters = f"line: int, function: str, message: str, values: list[{torch_name}.Tensor], braces: bool"
    split = "text, args = (message.format(*values), ()) if braces else (message, tuple(values))"
    # A logger made by a call in `__init__` (`self.log = logging.getLogger("m")`) is the same object
    # when the helper makes it again: named once in the body.
    fetch = "" if logger.isidentifier() else f"logger = {logger}\n"
    logger = logger if logger.isidentifier() else "logger"
    if standard and method in LEVELS:
        level = LEVELS[method]
        record = f"{logger}.makeRecord({logger}.name, {level}, {_FILE}, line, text, args, None, function)"
        body = (
            f"{fetch}if {logger}.isEnabledFor({level}):  # logging.{LEVEL_NAMES[level]}\n"
            f"{LEVEL}{split}\n"
            f"{LEVEL}{logger}.handle({record})"
        )
    elif standard and method in _ONCE_METHODS:
        body = f"{fetch}{split}\n{logger}.{method}(text, *args)"
    else:
        raise Refused("a logger method whose record graphmend cannot rebuild")
    helper = Helper(f"_{base}_{method}_in_graph", parameters, body, OPERATOR, " -> None", OPERATOR_DOCSTRING)
    title = f"Keep `{ctx.segment(call.func)}` in the graph"
    return helper, [literal(function), message, f"[{', '.join(values)}]", str(braces)], title


def _plan_warning(
    call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext, function: str, torch_name: str
) -> tuple[Helper, list[str], str]:
    keywords = {k.arg for k in call.keywords}
    if keywords - {"category"} or len(call.args) not in (1, 2) or (len(call.args) == 2 and keywords):
        raise Refused("keywords other than category")
    category_node = call.args[1] if len(call.args) == 2 else next((k.value for k in call.keywords), None)
    category = "UserWarning"
    if category_node is not None:
        if not isinstance(category_node, ast.Name) or category_node.id in analysis.shadowed_names:
            raise Refused("a category that is not a module-level or builtin name")
        category = category_node.id
    message, values, _ = _message(call.args[0], [], analysis, ctx, braces_only=True)
    warn = ctx.segment(call.func)
    if not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
        raise Refused("`warn` imported by name")
    body = (
        'registry = globals().setdefault("__warningregistry__", {})\n'
        f"{warn}_explicit(message.format(*values), {category}, {_FILE}, line, __name__, registry, globals())"
    )
    suffix = "" if category == "UserWarning" else f"_{category}"
    parameters = f"line: int, message: str, values: list[{torch_name}.Tensor]"
    helper = Helper(f"_warn{suffix}_in_graph", parameters, body, OPERATOR, " -> None", OPERATOR_DOCSTRING)
    return (
        helper,
        [message, f"[{', '.join(values)}]"],
        "Keep the warning in the graph",
    )


def _message(
    message: ast.expr,
    rest: list[ast.expr],
    analysis: FunctionAnalysis,
    ctx: FixContext,
    braces_only: bool = False,
) -> tuple[str, list[str], bool]:
    """The message's text as the operator takes it, its tensor values, and whether it is a
    `str.format` template (an f-string, a warning) rather than a `%` format with arguments."""
    if isinstance(message, ast.JoinedStr) and not rest:
        return _fstring(message, analysis, ctx)
    if not (isinstance(message, ast.Constant) and isinstance(message.value, str)):
        raise Refused("a message that is not a string literal or an f-string")
    if not all(analysis.kind(v).is_tensor for v in rest):
        raise Refused("an argument that is not a tensor")
    if braces_only:
        return literal(message.value.replace("{", "{{").replace("}", "}}")), [], True
    return ctx.segment(message), [ctx.segment(v) for v in rest], False


def _fstring(message: ast.JoinedStr, analysis: FunctionAnalysis, ctx: FixContext) -> tuple[str, list[str], bool]:
    """An f-string as the operator's `str.format` template and its tensor values."""
    pieces = [str(p.value) if isinstance(p, ast.Constant) else p for p in message.values]
    text, values = _template(pieces, analysis, ctx)  # type: ignore[arg-type]
    return text, values, True


def _template(
    pieces: list[str | ast.FormattedValue], analysis: FunctionAnalysis, ctx: FixContext
) -> tuple[str, list[str]]:
    """Literal text and formatted values as the text of the operator's `str.format` template, and
    its tensor values. A Python value (a dtype, a flag, a string) is formatted into the template
    where the call is traced, Dynamo folding it to a constant: the template is formatted twice, so
    its tensors' fields and its own braces are written escaped once more (`"cast to {} for
    {{}}".format(dtype)`, then `[t]`)."""
    parts: list[str] = []
    python: list[str] = []
    values: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece.replace("{", "{{{{").replace("}", "}}}}"))
            continue
        field: list[str] = []
        spec = template_part(ast.JoinedStr([piece]), analysis, field, ctx, "")
        if analysis.kind(piece.value).is_tensor or analysis.used_as_tensor(piece.value):
            parts.append("{" + spec + "}")  # `{{...}}` once escaped
            values.extend(field)
        elif _folded_when_traced(piece.value, analysis):
            parts.append("{}")
            python.append(_escaped_text(field[0], spec))
        else:
            raise Refused("a value that is neither a tensor nor a Python value Dynamo folds")
    template = "".join(parts)
    if python:
        return f"{literal(template)}.format({', '.join(python)})", values
    return literal(template.format()), values


def _escaped_text(value: str, field: str) -> str:
    """A Python value's text as the first `format` fills it in, its braces escaped: the helper
    formats the template again with the tensors (a string holding `{y}` would raise KeyError there).
    Written with `str.format` and the f-string's own field: Dynamo's `format()` builtin drops the
    spec and raises on braces (torch 2.13)."""
    return f'{literal(field)}.format({value}).replace("{{", "{{{{").replace("}}", "}}}}")'


def plan_print(
    call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext, sep: str, end: str, stream: str | None
) -> tuple[Helper, list[str], str] | None:
    """The helper, arguments and title that keep a print in the graph as an operator (`stream`:
    how the helper names `file=`, None for stdout); None where this form does not apply."""
    torch_name = _available(analysis, ctx)
    if torch_name is None:
        return None
    pieces: list[str | ast.FormattedValue] = []
    for position, argument in enumerate(call.args):
        if position:
            pieces.append(sep)
        if isinstance(argument, ast.Constant) and isinstance(argument.value, (str, int, float, bool, type(None))):
            pieces.append(str(argument.value))
        elif isinstance(argument, ast.JoinedStr):
            pieces.extend(str(p.value) if isinstance(p, ast.Constant) else p for p in argument.values)  # type: ignore[misc]
        else:
            pieces.append(ast.FormattedValue(value=argument, conversion=ord("s"), format_spec=None))
    if end != "\n":
        pieces.append(end)
    try:
        message, values = _template(pieces, analysis, ctx)
    except Refused:
        return None
    keywords = ("" if end == "\n" else ', end=""') + ("" if stream is None else f", file={stream}")
    name = "_print" + ("" if stream is None else f"_{stream.rsplit('.', 1)[-1]}") + ("" if end == "\n" else "_end")
    parameters = f"message: str, values: list[{torch_name}.Tensor]"
    body = f"print(message.format(*values){keywords})"
    helper = Helper(f"{name}_in_graph", parameters, body, OPERATOR, " -> None", OPERATOR_DOCSTRING)
    return helper, [message, f"[{', '.join(values)}]"], "Keep the print in the graph"


def _folded_when_traced(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A Python value Dynamo turns into a constant string while tracing: not a size, which may be
    symbolic (its text would be `s0`), nor anything that may be a tensor."""
    if analysis.kind(value) is not Kind.PYTHON and not configured(value, analysis):
        return False
    for node in walk(value):
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim"):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if name in ("size", "len", "numel", "dim", "item", "tolist"):
                return False
    return True


def stale_site(call: ast.Call, analysis: FunctionAnalysis) -> list[tuple[ast.expr, str]]:
    """For a call of one of the file's in-graph message helpers: each literal naming the call's
    line or function that names another, with the text it should have (empty when all hold)."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id in analysis.shadowed_names or analysis.function is None:
        return []
    shape = _in_graph_helpers(analysis.index.tree).get(func.id)
    if shape is None:
        return []
    first, takes_function = shape
    if len(call.args) <= first:
        return []
    wanted: list[tuple[ast.expr, int | str]] = [(call.args[first], call.lineno)]
    if takes_function and len(call.args) > first + 1 and not _in_nested_code(call, analysis.function.node):
        wanted.append((call.args[first + 1], analysis.function.node.name))
    return [
        (argument, str(value) if isinstance(value, int) else literal(value))
        for argument, value in wanted
        if isinstance(argument, ast.Constant) and argument.value != value
    ]


_NESTED_CODE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _in_nested_code(call: ast.Call, function: ast.AST) -> bool:
    """`call` sits in a lambda or a comprehension of `function`: the name Python records there is
    `<lambda>`, `<listcomp>` (3.11) or the function's (3.12 inlines comprehensions), so no function
    name is the call's own on every Python (review 9)."""
    return any(isinstance(node, _NESTED_CODE) and any(n is call for n in walk(node)) for node in walk(function))


@once_per_module  # asked for every message call of a file: walking its functions each time is quadratic
def _in_graph_helpers(tree: ast.Module) -> dict[str, tuple[int, bool]]:
    """The module's in-graph message helpers (a function whose first parameter is `line`, or whose
    second after a branch's `when`, rebound as `name = wrapper(name)` by a module-level function
    that registers an effectful operator) → the position of `line`, and whether the function's
    name follows it."""
    functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    wrappers = {
        name
        for name, function in functions.items()
        if any(  # issue 67's token form, or issue 50's ordered effect
            isinstance(n, ast.Attribute) and n.attr in ("skip_code", "_register_effectful_op") for n in walk(function)
        )
    }
    helpers: dict[str, tuple[int, bool]] = {}
    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in wrappers
        ):
            continue
        function = functions.get(stmt.targets[0].id)
        parameters = [a.arg for a in function.args.args] if function is not None else []
        first = 1 if parameters[:1] == ["when"] else 0
        if parameters[first : first + 1] == ["line"]:
            helpers[stmt.targets[0].id] = (first, parameters[first + 1 : first + 2] == ["function"])
    return helpers
