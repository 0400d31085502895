"""Messages as text: a call's arguments as one `str.format` template and its values, formatted when
the message is finally written (after the graph, or by an in-graph operator)."""

from __future__ import annotations

import ast

from ..analysis.module_state import assigned_values, holds_a_configuration
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_warning
from ..semantics import walk
from .base import FixContext, Refused


def literal(text: str) -> str:
    """A Python string literal for `text`, double-quoted when that needs no escaping (Black's style)."""
    single = repr(text)
    if single.startswith("'") and '"' not in text:
        return '"' + single[1:-1].replace("\\'", "'") + '"'
    return single


def template_part(node: ast.expr, analysis: FunctionAnalysis, values: list[str], ctx: FixContext, plain: str) -> str:
    """This argument's share of the format template; its values are appended to `values`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return escaped(str(node.value))
    if isinstance(node, ast.JoinedStr):
        parts = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(escaped(str(piece.value)))
                continue
            assert isinstance(piece, ast.FormattedValue)
            spec = ""
            if piece.format_spec is not None:
                if not all(isinstance(p, ast.Constant) for p in piece.format_spec.values):  # type: ignore[attr-defined]
                    raise Refused("an f-string has a computed format spec")
                spec = ":" + "".join(str(p.value) for p in piece.format_spec.values)  # type: ignore[attr-defined]
            conversion = "" if piece.conversion == -1 else "!" + chr(piece.conversion)
            values.append(formatted_value(piece.value, analysis, ctx))
            parts.append("{" + conversion + spec + "}")
        return "".join(parts)
    values.append(formatted_value(node, analysis, ctx))
    return plain


def formatted_value(node: ast.expr, analysis: FunctionAnalysis, ctx: FixContext) -> str:
    """A value formatted lazily by `str.format` after the graph: tensors, numbers, shapes, sizes,
    dtypes, tuples and lists all work (measured, static and dynamic shapes alike)."""
    kind = analysis.kind(node)
    if kind in (Kind.LOGGER, Kind.SELF, Kind.NUMPY):
        raise Refused(f"`{ctx.segment(node)}` cannot be formatted after the graph ({kind.value})")
    traced = traced_object(node)
    if traced is not None:
        raise Refused(
            f"the message shows `{ctx.segment(traced)}`, which Dynamo formats once while tracing: every call "
            "would show the traced object, not its own"
        )
    text = ctx.segment(node)
    return f"({text})" if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)) or "\n" in text else text


# What a tensor has per call that Dynamo, tracing fake tensors, turns into a constant of the trace:
# the autograd node, the version counter, the storage's address.
_PER_CALL_ATTRIBUTES = frozenset({"grad_fn", "_version"})
_PER_CALL_METHODS = frozenset({"data_ptr", "untyped_storage", "storage"})


def traced_object(node: ast.expr) -> ast.expr | None:
    """The part of a formatted value that would be the trace's object, not the call's: `y.grad_fn`,
    `y._version`, `y.data_ptr()`, `id(y)`."""
    for part in walk(node):
        if isinstance(part, ast.Attribute) and part.attr in _PER_CALL_ATTRIBUTES:
            return part
        if isinstance(part, ast.Call):
            func = part.func
            if (isinstance(func, ast.Attribute) and func.attr in _PER_CALL_METHODS) or (
                isinstance(func, ast.Name) and func.id == "id"
            ):
                return part
    return None


def formatted_message(template: str, values: list[str]) -> str:
    """`"template".format(values)`, or the plain literal when there is nothing to format."""
    if not values:
        return literal(template.format())
    return f"{literal(template)}.format({', '.join(values)})"


def escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def message_values(call: ast.Call, analysis: FunctionAnalysis) -> list[ast.expr]:
    """What a message formats: a print's or a log call's arguments, a warning's message (not its
    category), with the values inside f-strings."""
    if is_warning(call, analysis):
        return printed_values(ast.Call(func=call.func, args=call.args[:1], keywords=[]))
    return printed_values(call)


def may_be_tensor(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    """Anything but a literal or a value known not to be a tensor."""
    if isinstance(value, ast.Constant) or configured(value, analysis):
        return False
    kind = analysis.kind(value)
    return kind.is_tensor or kind in (Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS)


def configured(value: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """A Python value a message shows that kinds leave unknown: a field of a transformers
    configuration (`self.config._pre_quantization_dtype`: JSON values, never tensors), or a name
    every binding of which is a Python value or such a field (`target_dtype`, bound to
    `torch.get_autocast_gpu_dtype()`, the config's dtype or `self.q_proj.weight.dtype`), or what
    Python computes from them alone: a conditional expression of two such values, a builtin that
    gives a Python value from Python values (Longformer's `attention_window`: the field, or its
    `max()`)."""
    if analysis.kind(value) is Kind.PYTHON:
        return True
    if isinstance(value, ast.IfExp):
        return configured(value.body, analysis, seen) and configured(value.orelse, analysis, seen)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _PYTHON_BUILTINS
        and analysis.is_builtin(value.func.id)
        and not value.keywords
        and value.args
    ):
        return all(configured(argument, analysis, seen) for argument in value.args)
    if isinstance(value, ast.Attribute):
        root = value
        while isinstance(root.value, ast.Attribute):
            root = root.value
        return root is not value and holds_a_configuration(root, analysis, optional=True)
    if isinstance(value, ast.Name) and value.id not in seen and analysis.function is not None:
        bindings = assigned_values(value.id, analysis)
        return bool(bindings) and all(
            isinstance(b, ast.expr) and configured(b, analysis, seen | {value.id}) for b in bindings
        )
    return False


# Builtins whose result from Python values is a Python value (of a tensor, `max` and `abs` give a tensor).
_PYTHON_BUILTINS = frozenset("max min abs int float bool str len round sum".split())


def printed_values(call: ast.Call) -> list[ast.expr]:
    """What a print formats: its arguments, and the values inside its f-strings."""
    values: list[ast.expr] = []
    for argument in call.args:
        if isinstance(argument, ast.JoinedStr):
            values.extend(p.value for p in argument.values if isinstance(p, ast.FormattedValue))
        else:
            values.append(argument)
    return values
