"""Guards around masked writes: `if m.any(): x[m] = v` becomes `x[m] = v`.

A write through a boolean mask changes nothing where the mask is false, so when the mask has no
true element at all it is a no-op, and the `if` that checks for one only costs a graph break:

    if pad_mask.any():                       ll.masked_fill_(pad_mask, 0.0)
        ll.masked_fill_(pad_mask, 0.0)  →
        smooth.masked_fill_(pad_mask, 0.0)   smooth.masked_fill_(pad_mask, 0.0)

Recognised tests: `m.any()`, `torch.any(m)`, `m.sum() > 0`, `m.sum() != 0`, `m.sum() >= 1` and
`m.count_nonzero() > 0` for a bool tensor `m`; and a bound on an extreme, `t.max() > c` (also `>=`,
`torch.max(t)`, `t.amax()`, `np.max(t)`; `t.min() < c` and `<=` likewise), which holds when the mask
`t > c` has a true element. Writes: `t[m] = v` (also through a view, `t[1:][m] = v`),
`t.masked_fill_(m, v)`, `t.masked_scatter_(m, s)` with the very same mask expression. NumPy arrays
too (SpecAugment's `if idxs.max() > n - 1: idxs[idxs > n - 1] = n - 1`): dropping the test adds no
torch call. A message in the branch is replayed only when the test holds (torch values only).

A torch write to a local `x` nothing else holds is made out of place, `x = x.index_put((m,),
torch.tensor(v, dtype=x.dtype, device=x.device))` for `x[m] = v` and `x = x.masked_fill(m, v)` for `x.masked_fill_(m, v)`
(`masked_scatter` likewise), exact for autograd too. Written in place on every call, as other
writes stay (the caller's tensor, a view), it counts as a change for autograd even when the mask is
all false, and backward raises where a tensor autograd saved is changed (measured: `x =
torch.sqrt(x)` then `x[x > 0] = 0.5`), which the original never reached: the title says so. Also
unsafe: a bound on an extreme differs where `t` holds a NaN (`t.max()` is NaN, so the original
skipped every write).
"""

from __future__ import annotations

import ast

from ..analysis import conditions
from ..analysis.hazards import hazards
from ..analysis.purity import caveats, impurity
from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_message
from ..semantics import walk
from .base import FixContext, Refusal, Refused
from .cudagraphs import rebinding_refusal
from .deferral import message_in_branch
from .text import Unmovable, block_text, comments_outside, indent_of, reindented

TITLE = "Drop the check: the masked write changes nothing when the mask has no true element"
_MASKED_METHODS = frozenset({"masked_fill_", "masked_scatter_"})


def unguard_masked_writes(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
    """The fix for `if <m has a true element>: <writes through m>`; None for any other `if`."""
    extreme = _bounded_extreme(node.test, analysis)
    mask = extreme if extreme is not None else _tested_mask(node.test, analysis)
    if mask is None or node.orelse:
        return None
    # `t[m] = v` writes through a mask only when `m` is bool (an integer `m` indexes);
    # `masked_fill_`/`masked_scatter_` accept nothing but a bool mask; a comparison is one.
    indexing = extreme is not None or analysis.kind(mask).present is Kind.BOOL_TENSOR
    writes = [s for s in node.body if _masked_write(s, mask, indexing)]
    if not writes:
        return None
    reasons: list[str] = []
    if extreme is not None:
        array = ast.unparse(extreme.left)
        reasons.append(
            f"where `{array}` is empty the original raised (its extreme has no value) and the rewrite does not"
        )
        if not _indexes_later(extreme.left, node, analysis):
            reasons.append(f"where `{array}` holds a NaN the original skipped the write (its extreme is NaN)")
    edits: list[TextEdit] = []
    indent = indent_of(ctx.source.lines[node.lineno - 1])
    lines = [indent + comment for comment in comments_outside(ctx, node, node.body)]
    condition: str | None = None
    if any(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and is_message(s.value, analysis) for s in node.body
    ):
        tested = extreme.left if extreme is not None else mask  # a name of the tree: `extreme` is built here
        if ctx.torch_name is None or analysis.kind(tested) is Kind.NUMPY:
            return None  # the replayed message would need the test as a torch tensor
        # Tested before any write changes what the test reads.
        condition = ctx.fresh_name("cond")
        lines.append(
            f"{indent}{condition} = {conditions.tensor_logic(node.test, analysis, ctx.segment, ctx.torch_name)}"
        )
    for stmt in node.body:
        # Everything under the check now runs with any mask, all false (or empty) included.
        for hazard in hazards(stmt, analysis):
            if hazard.raises is not None:
                return Refusal(hazard.raises)
            if hazard.named is not None and hazard.named not in reasons:
                reasons.append(hazard.named)  # it now runs with any mask
            elif hazard.named is None and stmt in writes and hazard.words() not in reasons:
                reasons.append(hazard.words())
        if stmt in writes:
            for value in _written_values(stmt):
                reason = impurity(value, analysis, set())
                if reason is not None:
                    return Refusal(reason)
                reasons.extend(r for r in caveats([value], analysis) if r not in reasons)
            reasons.extend(r for r in _every_mask_reasons(stmt) if r not in reasons)
            numpy = analysis.kind(_written_values(stmt)[1]) is Kind.NUMPY  # no autograd: in place as written
            rebound = None if numpy else _out_of_place(stmt, analysis, ctx)
            if rebound is not None:
                lines.append(indent + rebound)
                continue
            if not numpy and IN_PLACE not in reasons:
                reasons.insert(0, IN_PLACE)
            try:
                lines.extend(reindented(block_text([stmt], ctx), [stmt], ctx, indent))
            except Unmovable as error:
                return Refusal(str(error))
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_message(stmt.value, analysis):
            assert condition is not None
            try:
                name, arguments, helper_edits, message_reasons = message_in_branch(stmt.value, analysis, ctx)
            except Refused as refusal:
                return Refusal(f"a message in the branch cannot be deferred: {refusal.reason}")
            edits.extend(e for e in helper_edits if e not in edits)
            reasons.extend(r for r in message_reasons if r not in reasons)
            lines.append(f"{indent}{name}({', '.join([condition, *arguments])})")
            continue
        return None  # something else runs under the check: not this shape (predication may apply)
    edits.append(TextEdit(ctx.line_range(node.lineno, node.end_lineno or node.lineno), "\n".join(lines)))
    if not reasons:
        return Fix(TITLE, Applicability.SAFE, tuple(edits))
    return Fix(TITLE, Applicability.UNSAFE, tuple(edits), tuple(reasons))


# What a write that now runs with every mask changes beside its values (issue 67, review 8): torch
# checks the mask and the value on every call, and a value that requires grad joins the graph.
EVERY_MASK = (
    "the write now runs with every mask, also one that selects nothing: a mask or value that does not broadcast, "
    "a mask that is not bool, or a value the tensor's dtype cannot hold raises where the original skipped the "
    "write, a tensor of no dimensions cannot be indexed, and a written value that requires grad now gets a "
    "gradient (zero) and makes the result require grad"
)
IN_PLACE = (
    "the write now runs in place even when the mask is all false: the same values, but a change for "
    "autograd, so backward raises where it saved the written tensor"
)


def _out_of_place(stmt: ast.stmt, analysis: FunctionAnalysis, ctx: FixContext) -> str | None:
    """`x[m] = v` → `x = x.index_put((m,), torch.tensor(v, dtype=x.dtype, device=x.device))` (the
    number converted as the write converts it; TorchScript has no `new_tensor`), `x.masked_fill_(m, v)` →
    `x = x.masked_fill(m, v)`, `x.masked_scatter_(m, s)` → `x = x.masked_scatter(m, s)`: the same
    values, and no in-place change for autograd to trip on; None where `x` is not a local that can
    be rebound (it is written in place then).

    `x[m] = v` is `index_put_` itself, so its out-of-place twin keeps what `masked_fill` would not
    (measured, torch 2.13): a mask over the leading dimensions (`(batch, seq)` on `(batch, seq,
    dim)`: indexing selects rows, `masked_fill` broadcasts from the trailing ones), a number the
    dtype cannot hold (`-1e9` into float16 is -inf; `masked_fill` raises), and the IndexError of a
    mask whose shape does not match."""
    target = _written_values(stmt)[1]
    if not isinstance(target, ast.Name) or analysis.kind(target) is Kind.NUMPY:
        return None
    if rebinding_refusal(target.id, stmt, analysis) is not None:
        return None
    if isinstance(stmt, ast.Assign):
        value = stmt.value
        if analysis.kind(value) is not Kind.PYTHON:
            return None  # a tensor written through the mask: its dtype may differ from the target's
        if ctx.torch_name is None:
            return None
        mask = stmt.targets[0].slice  # type: ignore[attr-defined]
        name = target.id
        converted = f"{ctx.torch_name}.tensor({ctx.segment(value)}, dtype={name}.dtype, device={name}.device)"
        return f"{name} = {name}.index_put(({ctx.segment(mask)},), {converted})"
    call = stmt.value  # type: ignore[attr-defined]
    method, mask, written = call.func.attr.removesuffix("_"), call.args[0], call.args[1]
    return f"{target.id} = {target.id}.{method}({ctx.segment(mask)}, {ctx.segment(written)})"


def _tested_mask(test: ast.expr, analysis: FunctionAnalysis) -> ast.expr | None:
    """`m` when `test` is true exactly when the bool tensor `m` has a true element."""
    reduced = test
    threshold_ok = True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op, bound = test.ops[0], test.comparators[0].value
        threshold_ok = (isinstance(op, (ast.Gt, ast.NotEq)) and bound == 0) or (isinstance(op, ast.GtE) and bound == 1)
        reduced = test.left
    if not threshold_ok or not isinstance(reduced, ast.Call) or reduced.keywords:
        return None
    func = reduced.func
    counting = reduced is not test  # `.sum() > 0`, `.count_nonzero() > 0`
    if isinstance(func, ast.Attribute) and not reduced.args:
        method, mask = func.attr, func.value
    elif analysis.qualified_name(func) in ("torch.any", "torch.sum", "torch.count_nonzero") and len(reduced.args) == 1:
        method, mask = analysis.qualified_name(func).rsplit(".", 1)[-1], reduced.args[0]  # type: ignore[union-attr]
    else:
        return None
    if method not in ("any", "sum", "count_nonzero") or (method == "any" and counting):
        return None
    return mask if analysis.used_as_tensor(mask) or analysis.kind(mask).is_tensor else None


_EXTREMES = {"max": (ast.Gt, ast.GtE), "amax": (ast.Gt, ast.GtE), "min": (ast.Lt, ast.LtE), "amin": (ast.Lt, ast.LtE)}


def _bounded_extreme(test: ast.expr, analysis: FunctionAnalysis) -> ast.Compare | None:
    """`t > c` when `test` is `t.max() > c` (or a like bound on an extreme of a tensor or array `t`):
    true exactly when that mask has a true element, NaN aside."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call)):
        return None
    call = test.left
    if call.keywords:
        return None
    qualname = analysis.qualified_name(call.func)
    if qualname is not None and qualname.split(".", 1)[0] in ("torch", "numpy") and len(call.args) == 1:
        method, array = qualname.rsplit(".", 1)[-1], call.args[0]
    elif qualname is None and isinstance(call.func, ast.Attribute) and not call.args:
        method, array = call.func.attr, call.func.value
    else:
        return None
    if not isinstance(test.ops[0], _EXTREMES.get(method, ())):
        return None
    kind = analysis.kind(array)
    if not (kind.is_tensor or kind is Kind.NUMPY):
        return None
    return ast.Compare(left=array, ops=test.ops, comparators=test.comparators)


def _masked_write(stmt: ast.stmt, mask: ast.expr, indexing: bool) -> bool:
    same = ast.dump(mask)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and indexing:
        target = stmt.targets[0]
        return isinstance(target, ast.Subscript) and ast.dump(target.slice) == same
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in _MASKED_METHODS
            and len(call.args) == 2
            and not call.keywords
            and ast.dump(call.args[0]) == same
        )
    return False


def _every_mask_reasons(stmt: ast.stmt) -> list[str]:
    """What a write that now runs with every mask changes: EVERY_MASK, and a written integer that
    some integer dtype cannot hold."""
    overflow = _unfitting_value(_written_values(stmt)[0])
    return [EVERY_MASK] if overflow is None else [overflow, EVERY_MASK]


def _unfitting_value(value: ast.expr) -> str | None:
    """A written integer that some integer dtype cannot hold (`2 ** 40` in int32): converted to the
    target's dtype on every call, also where the mask selects nothing, it raises where the original
    skipped the write (issue 67, review 7). Integers from -128 to 127 fit every numeric dtype."""
    number = _constant_number(value)
    if not isinstance(number, int) or isinstance(number, bool) or -128 <= number <= 127:
        return None  # a float goes through `torch.tensor` in the target's dtype: inf where it overflows a float
    return (
        f"the written value `{ast.unparse(value)}` does not fit every integer dtype (int8, int32): torch raises for it "
        "on every call after the rewrite, also where the mask selects nothing"
    )


def _constant_number(value: ast.expr) -> int | float | None:
    """The number a constant expression written in the code gives (`-1e9`, `2 ** 40`,
    `float("-inf")`), or None."""
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
        return value.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        inner = _constant_number(value.operand)
        return None if inner is None else -inner if isinstance(value.op, ast.USub) else inner
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow)):
        left, right = _constant_number(value.left), _constant_number(value.right)
        if left is None or right is None or (isinstance(value.op, ast.Pow) and abs(right) > 1024):
            return None
        try:
            if isinstance(value.op, ast.Add):
                return left + right
            if isinstance(value.op, ast.Sub):
                return left - right
            if isinstance(value.op, ast.Mult):
                return left * right
            result = left**right
        except (OverflowError, ZeroDivisionError):
            return float("inf")
        return result if isinstance(result, (int, float)) else None  # a negative number's fractional power: complex
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "float"
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    ):
        try:
            return float(value.args[0].value)
        except ValueError:
            return None
    return None


def _written_values(stmt: ast.stmt) -> list[ast.expr]:
    """What a masked write evaluates besides the mask: the written value and the target's base."""
    if isinstance(stmt, ast.Assign):
        return [stmt.value, stmt.targets[0].value]  # type: ignore[attr-defined]
    call = stmt.value  # type: ignore[attr-defined]
    return [call.args[1], call.func.value]


# Calls whose argument at this position must be an integer array (NumPy and torch raise otherwise).
_INDEX_ARGUMENTS = {"put_along_axis": 1, "take_along_axis": 1, "gather": 2, "scatter": 2, "index_select": 2}


def _indexes_later(value: ast.expr, node: ast.If, analysis: FunctionAnalysis) -> bool:
    """`value` (a name) is used as indices after the `if` (`np.put_along_axis(m, value, 1, -1)`,
    `t[value]`), so in any run that does not raise it is an integer array: it holds no NaN, and the
    write the check guards changes nothing where its extreme is within the bound. A float `value`
    raises there, with or without the check."""
    function = analysis.function
    if function is None or not isinstance(value, ast.Name):
        return False
    end = node.end_lineno or node.lineno
    for later in walk(function.node):
        if getattr(later, "lineno", 0) <= end:
            continue
        if isinstance(later, ast.Call):
            name = (analysis.qualified_name(later.func) or "").rsplit(".", 1)[-1]
            position = _INDEX_ARGUMENTS.get(name)
            arguments = later.args
            if position is not None and len(arguments) > position and _is_name(arguments[position], value.id):
                return True
        if isinstance(later, ast.Subscript) and isinstance(later.ctx, ast.Load) and _is_name(later.slice, value.id):
            return True
    return False


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name
