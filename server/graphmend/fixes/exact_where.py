"""A selection that gives exactly what the `if` gave: `torch.where` where it provably does, the
`if` itself elsewhere.

`torch.where(c, a, b)` broadcasts and promotes: where the paths' values differ in shape, dtype or
device it returns something neither path returned (`a` float16 and `b` float32 give float32 on
both), and a condition of several elements selects element by element where `if c:` raised.
Its result is laid out by its inputs, so it keeps a path's strides only where both paths share them
and are dense (issue 67, review 7: the else path's `z + 1` came back with the if path's transposed
strides), and it takes strided tensors only (review 9: a sparse CSR, nested or quantized tensor,
which have no strides or sizes to compare, is left to the `if`). Which of these happens is rarely decidable from source (the dtype of a layer's output under
autocast, the shape a mask broadcasts to), so a fix whose values graphmend cannot prove alike
calls a helper that checks them while Dynamo traces: shapes, dtypes, devices and strides are fixed
in the graph (guarded), so the check costs nothing at run time and the selection stays in the graph
wherever the values are alike; elsewhere it is the original `if`, which breaks the graph as before.
Whatever it is given (a Python flag a skipped layer would have set, a number), it gives what the
`if` gave.

    x = torch.where(cond, x_if, x)  →  x = _exact_where(cond, x_if, x)
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..diagnostics import TextEdit
from .base import FixContext
from .helpers import LEVEL, PLAIN, Helper, helper_edit

NAME = "_exact_where"
DOCSTRING = (
    "`if_true if condition else if_false`, as one torch.where where that gives the same tensor, so that "
    "torch.compile keeps one graph."
)


# Where the fix names that strides may differ (a path a layout operation set), the helper compares
# shapes, dtypes and devices only: it selects, removing the break, rather than keeping the `if`.
ANY_LAYOUT = "_exact_where_any_layout"
ANY_LAYOUT_DOCSTRING = (
    "`if_true if condition else if_false`, as one torch.where where that gives the same values (its strides may "
    "differ), so that torch.compile keeps one graph."
)


def _body(torch_name: str, strides: bool = True) -> str:
    layout = (
        f"{LEVEL}and if_true.stride() == if_false.stride()\n"
        f"{LEVEL}and (if_true.is_contiguous() or if_true.is_contiguous(memory_format={torch_name}.channels_last))\n"
        if strides
        else ""
    )
    return (
        "if (\n"
        f"{LEVEL}isinstance(condition, {torch_name}.Tensor)\n"
        f"{LEVEL}and isinstance(if_true, {torch_name}.Tensor)\n"
        f"{LEVEL}and isinstance(if_false, {torch_name}.Tensor)\n"
        f"{LEVEL}and if_true.layout == if_false.layout == {torch_name}.strided\n"
        f"{LEVEL}and not (if_true.is_nested or if_false.is_nested or if_true.is_quantized or if_false.is_quantized)\n"
        f"{LEVEL}and condition.dtype == {torch_name}.bool\n"
        f"{LEVEL}and condition.numel() == 1\n"
        f"{LEVEL}and condition.dim() <= if_true.dim()\n"
        f"{LEVEL}and condition.device == if_true.device\n"
        f"{LEVEL}and if_true.shape == if_false.shape\n"
        f"{LEVEL}and if_true.dtype == if_false.dtype\n"
        f"{LEVEL}and if_true.device == if_false.device\n"
        f"{layout}"
        "):\n"
        f"{LEVEL}return {torch_name}.where(condition, if_true, if_false)\n"
        "return if_true if condition else if_false  # graphmend: ignore[GM102] (the original `if`: values differ)"
    )


def exact_where(
    ctx: FixContext, torch_name: str, define: Callable[[TextEdit], None], strides: bool = True
) -> str | None:
    """The helper's name in the file, its definition handed to `define` where the file lacks it;
    None where no module-level helper can be added (a notebook's cells): the caller selects with
    torch.where and names the difference. Without `strides`, the helper that does not compare them
    (the fix names that they may differ)."""
    if ctx.notebook:
        return None
    helper = (
        Helper(NAME, "condition, if_true, if_false", _body(torch_name), kind=PLAIN, docstring=DOCSTRING)
        if strides
        else Helper(
            ANY_LAYOUT,
            "condition, if_true, if_false",
            _body(torch_name, False),
            kind=PLAIN,
            docstring=ANY_LAYOUT_DOCSTRING,
        )
    )
    name, definition = helper_edit(helper, ctx, torch_name)
    if definition is not None:
        define(definition)
    return name


# What a call of the helper changes for TorchScript (issue 67: found by `where_users_run`'s script pass).
NOT_SCRIPTABLE = (
    "torch.jit.script of the module no longer compiles: TorchScript reads `forward` through torch.compile's "
    "wrapper, whose globals do not hold `_exact_where`"
)


def script_hazard(
    function: ast.FunctionDef | ast.AsyncFunctionDef, qualified_name: Callable[[ast.expr], str | None]
) -> str | None:
    """NOT_SCRIPTABLE where `function` is a module's `forward` decorated with `torch.compile` (a
    scripted module's `forward` then resolves names in the wrapper's module), else None."""
    if function.name != "forward":
        return None
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if qualified_name(target) == "torch.compile":
            return NOT_SCRIPTABLE
    return None
