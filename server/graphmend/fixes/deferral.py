"""Deferred side effects: print, logging and warnings move to after the compiled graph.

The call site becomes a call of a small module-level function that does the original effect, and
that function is registered in `torch._dynamo.config.reorderable_logging_functions`: Dynamo then
records the call while tracing and replays it after the graph has run, with the same text, level
and order (measured on torch 2.13.0). Run eagerly, the function simply does the effect at once.
The user's code gains no dependency on graphmend: only torch and what the call already used.

Dynamo replays only calls whose arguments are tensors, constants or format strings, so messages
are passed as one format template plus tensor values (`print("loss:", t)` becomes
`_deferred_print("loss: {!s}", "\\n", t)`); anything else is refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis, Kind
from ..source import Position, Range
from .base import FixContext, Refusal

MARKER = "graphmend: replayed by torch.compile after the graph runs"


@dataclass(frozen=True)
class _Helper:
    name: str
    parameters: str
    body: str


def literal(text: str) -> str:
    """A Python string literal for `text`, double-quoted when that needs no escaping (Black's style)."""
    single = repr(text)
    if single.startswith("'") and '"' not in text:
        return '"' + single[1:-1].replace("\\'", "'") + '"'
    return single


def _template_part(
    node: ast.expr, analysis: FunctionAnalysis, values: list[str], ctx: FixContext, plain: str, state: _Values
) -> str:
    """This argument's share of the format template; tensor values are appended to `values`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, type(None))):
        return str(node.value).replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        parts = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(str(piece.value).replace("{", "{{").replace("}", "}}"))
                continue
            assert isinstance(piece, ast.FormattedValue)
            spec = ""
            if piece.format_spec is not None:
                if not all(isinstance(p, ast.Constant) for p in piece.format_spec.values):  # type: ignore[attr-defined]
                    raise _Refuse("an f-string has a computed format spec")
                spec = ":" + "".join(str(p.value) for p in piece.format_spec.values)  # type: ignore[attr-defined]
            conversion = "" if piece.conversion == -1 else "!" + chr(piece.conversion)
            values.append(_deferrable_value(piece.value, analysis, ctx, state))
            parts.append("{" + conversion + spec + "}")
        return "".join(parts)
    values.append(_deferrable_value(node, analysis, ctx, state))
    return plain


class _Values:
    """Per-fix record of the values Dynamo can defer only if they are constants when traced."""

    def __init__(self) -> None:
        self.uncertain: list[str] = []


def _deferrable_value(node: ast.expr, analysis: FunctionAnalysis, ctx: FixContext, values: _Values) -> str:
    """The argument's text, if Dynamo can replay it: a tensor or a constant.

    A Python value Dynamo sees as a constant while tracing (a config int, a flag) defers too, but
    graphmend cannot prove that statically: such values make the fix unsafe (if one is not a
    constant, Dynamo keeps the break; the output is the same either way).
    """
    text = ctx.segment(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return text
    kind = analysis.kind(node)
    if kind.is_tensor:
        return text
    is_shape = (isinstance(node, ast.Attribute) and node.attr == "shape") or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args
    )
    if is_shape or kind in (Kind.CONTAINER, Kind.LOGGER, Kind.SELF, Kind.NUMPY) or not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.Call)):
        raise _Refuse(f"`{text}` is neither a tensor nor a constant, which Dynamo cannot defer")
    values.uncertain.append(text)
    return text


class _Refuse(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _constant_keyword(call: ast.Call, name: str, default: str | None) -> str | None:
    keyword = next((k for k in call.keywords if k.arg == name), None)
    if keyword is None:
        return default
    if isinstance(keyword.value, ast.Constant) and (keyword.value.value is None or isinstance(keyword.value.value, str)):
        return default if keyword.value.value is None else keyword.value.value
    raise _Refuse(f"`{name}=` is not a constant string")


def defer_print(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        state = _Values()
        unknown = [k.arg for k in call.keywords if k.arg not in ("sep", "end", "file")]
        if unknown or any(isinstance(a, ast.Starred) for a in call.args):
            raise _Refuse("the call passes `*args` or keywords other than sep/end/file")
        sep = _constant_keyword(call, "sep", " ")
        end = _constant_keyword(call, "end", "\n")
        assert sep is not None and end is not None
        values: list[str] = []
        template = sep.replace("{", "{{").replace("}", "}}").join(
            _template_part(arg, analysis, values, ctx, "{!s}", state) for arg in call.args
        )
        stream = _print_stream(call, analysis)
        name = "_deferred_print" if stream is None else f"_deferred_print_{stream.rsplit('.', 1)[-1]}"
        target = "" if stream is None else f", file={_stream_text(call, ctx)}"
        helper = _Helper(name, "template, end, *values", f"print(template.format(*values), end=end{target})")
        arguments = [literal(template), literal(end), *values]
        return _fix(call, analysis, ctx, helper, arguments, "Defer the print until the compiled graph has run", [], state)
    except _Refuse as refusal:
        return Refusal(refusal.reason)


def _print_stream(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    keyword = next((k for k in call.keywords if k.arg == "file"), None)
    if keyword is None or (isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
        return None
    qualname = analysis.qualified_name(keyword.value)
    if qualname in ("sys.stdout", "sys.stderr"):
        return qualname
    raise _Refuse("`file=` is not sys.stdout or sys.stderr")


def _stream_text(call: ast.Call, ctx: FixContext) -> str:
    keyword = next(k for k in call.keywords if k.arg == "file")
    return ctx.segment(keyword.value)


def defer_logging(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        state = _Values()
        func = call.func
        if not isinstance(func, ast.Attribute):
            raise _Refuse("the logging function is imported by name; call it through its module or logger")
        receiver = func.value
        if not isinstance(receiver, ast.Name):
            raise _Refuse("the logger is an attribute or expression; only module-level loggers can be deferred")
        if receiver.id in analysis.shadowed_names:
            raise _Refuse("the logger is a local variable; only module-level loggers can be deferred")
        is_module_logger = analysis.module.module_env.get(receiver.id) is Kind.LOGGER
        if not is_module_logger and analysis.qualified_name(receiver) != "logging":
            raise _Refuse("only module-level loggers and the logging module can be deferred")
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            raise _Refuse("the call passes keywords or `*args` (e.g. exc_info, extra)")
        if not call.args:
            raise _Refuse("the call has no message")
        method = func.attr
        message, rest = call.args[0], call.args[1:]
        base = f"_deferred_{receiver.id}_{method}"
        if isinstance(message, ast.JoinedStr) and not rest:
            values: list[str] = []
            template = _template_part(message, analysis, values, ctx, "{!s}", state)
            helper = _Helper(f"{base}_formatted", "template, *values", f"{receiver.id}.{method}(template.format(*values))")
            arguments = [literal(template), *values]
        else:
            for argument in call.args:
                _deferrable_value(argument, analysis, ctx, state)
            helper = _Helper(base, "*args", f"{receiver.id}.{method}(*args)")
            arguments = None  # passed through unchanged: only the callee is replaced
        return _fix(call, analysis, ctx, helper, arguments, f"Defer `{receiver.id}.{method}` until the compiled graph has run", [], state)
    except _Refuse as refusal:
        return Refusal(refusal.reason)


def defer_warning(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    try:
        state = _Values()
        if call.keywords and any(k.arg != "category" for k in call.keywords):
            raise _Refuse("the call passes keywords other than category (e.g. stacklevel)")
        arguments_in = list(call.args)
        category_node = next((k.value for k in call.keywords if k.arg == "category"), None)
        if len(arguments_in) == 2 and category_node is None:
            category_node = arguments_in.pop()
        if len(arguments_in) != 1:
            raise _Refuse("the call does not have exactly one message")
        category = "UserWarning"
        if category_node is not None:
            if not isinstance(category_node, ast.Name) or category_node.id in analysis.shadowed_names:
                raise _Refuse("the category is not a module-level or builtin name")
            category = category_node.id
        values: list[str] = []
        template = _template_part(arguments_in[0], analysis, values, ctx, "{!s}", state)
        function = ctx.segment(call.func)
        helper = _Helper(
            f"_deferred_warn_{category}", "template, *values", f"{function}(template.format(*values), {category})"
        )
        reasons = ["the warning is attributed to the helper's line, so Python's once-per-location filter sees one location for all of them"]
        return _fix(call, analysis, ctx, helper, [literal(template), *values], "Defer the warning until the compiled graph has run", reasons, state)
    except _Refuse as refusal:
        return Refusal(refusal.reason)


def _fix(
    call: ast.Call,
    analysis: FunctionAnalysis,
    ctx: FixContext,
    helper: _Helper,
    arguments: list[str] | None,
    title: str,
    unsafe_reasons: list[str],
    state: _Values,
) -> Fix:
    torch_name = ctx.torch_name
    if torch_name is None:
        raise _Refuse("torch is not imported as a module in this file")
    mutated = _mutated_later(call, analysis)
    reasons = list(unsafe_reasons)
    if state.uncertain:
        names = ", ".join(f"`{v}`" for v in dict.fromkeys(state.uncertain))
        reasons.append(f"{names} must be constant when traced for Dynamo to defer the call")
    if mutated:
        reasons.append(f"`{mutated}` is changed in place later, so the deferred message would show its new value")
    name, insertion = _helper_edit(helper, ctx, torch_name)
    if arguments is None:  # keep the call's own argument text and layout
        edits = [TextEdit(ctx.source.node_range(call.func), name)]
    else:
        edits = [TextEdit(ctx.source.node_range(call), f"{name}({', '.join(arguments)})")]
    if insertion is not None:
        edits.insert(0, insertion)
    if reasons:
        return Fix(f"{title} (unsafe: {'; '.join(reasons)})", Applicability.UNSAFE, tuple(edits))
    return Fix(title, Applicability.SAFE, tuple(edits))


def predicated_helper(base: str, ctx: FixContext, torch_name: str) -> tuple[str, TextEdit | None]:
    """`<base>_if(when, *args)`: replays `<base>(*args)` only if the tensor `when` is true, so a
    deferred message from inside a branch still appears only when that branch would have run."""
    return _helper_edit(_Helper(f"{base}_if", "when, *args", f"if when:\n        {base}(*args)"), ctx, torch_name)


def _helper_edit(helper: _Helper, ctx: FixContext, torch_name: str) -> tuple[str, TextEdit | None]:
    """The helper's name, and the edit that defines it (None when the file already has it)."""
    existing = ctx.top_level_functions
    name = helper.name
    number = 1
    while name in existing or (name in ctx.all_names and name not in existing):
        current = existing.get(name)
        if current is not None and MARKER in (ast.get_docstring(current) or ""):
            return name, None
        number += 1
        name = f"{helper.name}_{number}"
    # Disabled for Dynamo: when the call is replayed after the graph, Dynamo must not try to
    # compile the helper's own frame (that would log a break on the print inside it).
    code = (
        f"\n\n\n@{torch_name}.compiler.disable\n"
        f"def {name}({helper.parameters}):\n"
        f'    """{MARKER} (torch._dynamo reorderable_logging_functions)."""\n'
        f"    {helper.body}\n\n\n"
        f"{torch_name}._dynamo.config.reorderable_logging_functions.add({name})"
    )
    needed = {torch_name} | {n.id for n in ast.walk(ast.parse(helper.body)) if isinstance(n, ast.Name)}
    end = _end(ctx, _anchor(ctx, needed))
    following = ctx.source.lines[end.line + 1] if end.line + 1 < len(ctx.source.lines) else ""
    if following.strip():
        code += "\n"  # keep a blank line between the registration and the next statement
    return name, TextEdit(Range(end, end), code)


def _anchor(ctx: FixContext, needed: set[str]) -> ast.stmt:
    """The top-level statement after which the helper goes: after the leading docstring/imports,
    and after every top-level statement that binds a name the helper needs when it is defined or
    registered (torch) or called (the logger, `sys`, `warnings`)."""
    body = ctx.index.tree.body
    last = body[0]
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt is body[0]
        ):
            last = stmt
        else:
            break
    for name in needed:
        binding = ctx.top_level_bindings.get(name)
        if binding is not None and binding.lineno > last.lineno:
            last = binding
    return last


def _end(ctx: FixContext, stmt: ast.stmt) -> Position:
    end_line = stmt.end_lineno or stmt.lineno
    return Position(end_line - 1, len(ctx.source.lines[end_line - 1]))


def _mutated_later(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """A tensor passed to the call that the function changes in place after it."""
    if analysis.function is None:
        return None
    passed = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    for node in ast.walk(analysis.function.node):
        if getattr(node, "lineno", 0) <= (call.end_lineno or call.lineno):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_"):
            base = node.func.value
            if isinstance(base, ast.Name) and base.id in passed:
                return base.id
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                base = target.value if isinstance(target, ast.Subscript) else (target if isinstance(node, ast.AugAssign) else None)
                if isinstance(base, ast.Name) and base.id in passed:
                    return base.id
    return None
