"""Rewrites that let inductor record a compiled graph as a CUDA graph (the GM4xx rules).

Each keeps what the function computes and moves what inductor refuses to record out of the way:
a plain tensor attribute becomes a non-persistent buffer (so `.to()`/`.cuda()` move it), a masked
write of many values becomes a `torch.where` select, an in-place change of an input becomes an
out-of-place one (or works on a copy), a Python number changed on every call becomes a 0-d tensor
buffer changed in place.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..analysis import liveness
from ..analysis.module_state import (
    OUT_OF_PLACE,
    assigned_values,
    holds,
    rebinds_to_view,
    statement_of,
)
from ..analysis.purity import caveats, impurity
from ..diagnostics import Applicability, Fix, TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import ClassInfo, FunctionInfo, self_stores, walk
from ..source import Position, Range
from ..torch_api import VIEW_METHODS
from .base import FixContext, Refusal
from .text import first_line, indent_of


def _after_module_init(init: FunctionInfo, stmt: ast.stmt) -> bool:
    """`super().__init__(...)` (or `Base.__init__(self, ...)`) runs before `stmt`: only then can
    `register_buffer` be called."""
    for node in init.node.body:
        if node.lineno >= stmt.lineno:
            return False
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__":
            return True
    return False


def buffer_edit(
    init: FunctionInfo, value: ast.expr, attribute: str, ctx: FixContext, value_text: str | None = None
) -> TextEdit | Refusal:
    """`self.name = value` in `__init__` → `self.register_buffer("name", value, persistent=False)`
    (`value_text` in place of the value's own text)."""
    assign = statement_of(init, value)
    if assign is None or len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Attribute):
        return Refusal(f"`self.{attribute}` is not set by a plain `self.{attribute} = ...` statement")
    if not _after_module_init(init, assign):
        return Refusal(
            f"`self.{attribute}` is set before `super().__init__()` runs, where a buffer cannot be registered"
        )
    owner = init.owner
    if owner is not None and any(attribute in _class_level_names(klass.node) for klass in owner.mro()):
        return Refusal(f"the class itself defines `{attribute}`, and `register_buffer` refuses a name that exists")
    if owner is not None:
        for subclass in ctx.index.classes.values():
            stores = [node for _, node in self_stores(subclass, attribute)] if subclass is not owner else []
            if stores and owner in subclass.mro() and any(not _in_class(owner, node) for node in stores):
                line = next(node.lineno for node in stores if not _in_class(owner, node))
                return Refusal(
                    f"the subclass `{subclass.node.name}` assigns `self.{attribute}` (line {line}), which a buffer "
                    "accepts only as a tensor or None"
                )
    self_name = ctx.segment(assign.targets[0].value)
    text = f'{self_name}.register_buffer("{attribute}", {value_text or ctx.segment(value)}, persistent=False)'
    return TextEdit(ctx.source.node_range(assign), text)


def _class_level_names(cls: ast.ClassDef) -> set[str]:
    names = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        for target in getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]:
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def register_buffer(
    init: FunctionInfo,
    value: ast.expr,
    attribute: str,
    ctx: FixContext,
    title: str,
    hazards: tuple[str, ...],
    value_text: str | None = None,
) -> Fix | Refusal:
    """The unsafe fix `title` (with its `hazards`) that makes `self.<attribute> = value` a non-persistent
    buffer (`buffer_edit`)."""
    edit = buffer_edit(init, value, attribute, ctx, value_text)
    subclass = (
        f"a subclass (of another file) that assigns `self.{attribute}` anything but a tensor or None raises "
        "TypeError: a registered buffer accepts nothing else"
    )
    return edit if isinstance(edit, Refusal) else Fix(title, Applicability.UNSAFE, (edit,), (*hazards, subclass))


def _in_class(cls: ClassInfo, node: ast.AST) -> bool:
    """Whether `node` lies inside the class statement of `cls`."""
    return any(n is node for n in walk(cls.node))


def rebinding_refusal(name: str, stmt: ast.stmt, analysis: FunctionAnalysis) -> str | None:
    """Why an in-place write to the local `name` at `stmt` cannot become a new tensor bound to the
    name (the caller, a view, another name or a loop target would have seen the write); None: it can."""
    function = analysis.function
    if function is None or (
        name in _parameter_names(function.node) and not _rebound_first(function.node, name, stmt, analysis)
    ):
        return f"`{name}` is a parameter: the caller sees the write, a new tensor would not reach it"
    if not _fresh_local(function.node, name, analysis):
        return (
            f"`{name}` is not only ever bound to a new tensor here (a view, another name's tensor, a global "
            "or a loop target would see the write, a new tensor would not)"
        )
    if _aliased(function.node, name, stmt, analysis):
        return f"`{name}` is also held elsewhere (assigned to another name or stored), which sees the write"
    return None


def where_for_masked_write(assign: ast.Assign, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """`x[m] = y[m]` → `x = torch.where(m, y, x)` (a mask over the leading dimensions of `x` is
    given trailing ones first), for a local `x` that nothing else holds."""
    target = assign.targets[0]
    assert isinstance(target, ast.Subscript)
    value = assign.value
    if not (isinstance(value, ast.Subscript) and ast.dump(value.slice) == ast.dump(target.slice)):
        return Refusal("only `x[mask] = y[mask]` (the same mask on both sides) can become a `torch.where`")
    if not isinstance(target.value, ast.Name):
        return Refusal("the written tensor is not a local name that can be rebound")
    name = target.value.id
    refused = rebinding_refusal(name, assign, analysis)
    if refused is not None:
        return Refusal(refused)
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal(ctx.no_torch_name)
    if not _is_simple(target.slice):
        return Refusal("the mask is not a name or an attribute, so writing it twice would compute it twice")
    mask, source = ctx.segment(target.slice), ctx.segment(value.value)
    selected = (
        mask
        if _elementwise_of(target.slice, {name, source}, analysis)
        else f"{mask}.view(*{mask}.shape, *(1,) * ({name}.dim() - {mask}.dim()))"
    )
    text = f"{name} = {torch_name}.where({selected}, {source}, {name})"  # the write requires equal dtypes
    edit = TextEdit(ctx.source.node_range(assign), text)
    return Fix(
        f"Select with `{torch_name}.where` instead of writing through the mask",
        Applicability.UNSAFE,
        (edit,),
        ("a new tensor is bound to the name, the old one is left unchanged",),
    )


def _elementwise_of(
    mask: ast.expr, tensors: set[str], analysis: FunctionAnalysis, followed: frozenset[str] = frozenset()
) -> bool:
    """The mask is an element-wise test of one of `tensors` against Python values (`y > 0`,
    `torch.isnan(y)`), directly or through the name's one assignment: it has that tensor's shape,
    so `torch.where` needs no trailing dimensions."""
    if isinstance(mask, ast.Name) and analysis.function is not None:
        if mask.id in followed:
            return False  # `m = ~m`: a name defined by itself says nothing about its shape
        values = assigned_values(mask.id, analysis)
        return len(values) == 1 and _elementwise_of(values[0], tensors, analysis, followed | {mask.id})
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
        return _elementwise_of(mask.operand, tensors, analysis, followed)
    if isinstance(mask, ast.Compare):
        operands = [mask.left, *mask.comparators]
        shaped = [o for o in operands if isinstance(o, ast.Name) and o.id in tensors]
        return len(shaped) == 1 and all(
            o is shaped[0] or isinstance(o, ast.Constant) or analysis.kind(o) is Kind.PYTHON for o in operands
        )
    if isinstance(mask, ast.Call) and len(mask.args) <= 1 and not mask.keywords:
        func = mask.func
        if isinstance(func, ast.Attribute) and func.attr in _ELEMENTWISE_TESTS and not mask.args:
            return isinstance(func.value, ast.Name) and func.value.id in tensors
        qualname = analysis.qualified_name(func)
        return (
            qualname is not None
            and qualname.removeprefix("torch.") in _ELEMENTWISE_TESTS
            and len(mask.args) == 1
            and isinstance(mask.args[0], ast.Name)
            and mask.args[0].id in tensors
        )
    return False


_ELEMENTWISE_TESTS = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not"})


# Calls that return a tensor sharing no storage with their arguments.
# (Not `.float()`/`.to()`: they return the tensor itself when it already has that dtype.)
_NEW_TENSOR_METHODS = frozenset({"clone", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})
_NEW_TENSOR_FUNCTIONS = frozenset(
    {
        "zeros",
        "ones",
        "full",
        "empty",
        "zeros_like",
        "ones_like",
        "full_like",
        "empty_like",
        "rand",
        "randn",
        "rand_like",
        "randn_like",
        "arange",
        "tensor",
        "clone",
        "where",
        "cat",
        "stack",
    }
)


def _fresh_local(function: ast.AST, name: str, analysis: FunctionAnalysis) -> bool:
    """Every binding of `name` in the function is `name = <a new tensor>` (a factory, `.clone()`,
    arithmetic), and the name is not global or nonlocal: rebinding it is invisible elsewhere."""
    if any(isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names for node in walk(function)):
        return False
    values = assigned_values(name, analysis)
    return bool(values) and all(_new_tensor(value, analysis) for value in values)


def _rebound_first(function: ast.AST, name: str, stmt: ast.stmt, analysis: FunctionAnalysis) -> bool:
    """The parameter `name` is bound to a new tensor by a statement of the function's body that
    runs before the one holding `stmt` (`x = x.clone()` first): the write then reaches that copy."""
    for top in function.body:  # type: ignore[attr-defined]
        if any(node is stmt for node in walk(top)):
            return False
        if (
            isinstance(top, ast.Assign)
            and len(top.targets) == 1
            and isinstance(top.targets[0], ast.Name)
            and top.targets[0].id == name
            and _new_tensor(top.value, analysis)
        ):
            return True
    return False


def _new_tensor(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    qualname = analysis.qualified_name(func)
    if (
        qualname is not None
        and qualname.startswith("torch.")
        and qualname.removeprefix("torch.") in _NEW_TENSOR_FUNCTIONS
    ):
        return True
    return qualname is None and isinstance(func, ast.Attribute) and func.attr in _NEW_TENSOR_METHODS


def _is_simple(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and _is_simple(expr.value))


def _parameter_names(function: ast.AST) -> set[str]:
    args = function.args  # type: ignore[attr-defined]
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
    return {a.arg for a in every}


def _aliased(function: ast.AST, name: str, change: ast.stmt, analysis: FunctionAnalysis) -> bool:
    """`name` is handed on whole before `change` (or anywhere in a loop around it): assigned to
    another name, put in a display, passed as an argument. Such a holder keeps the tensor the
    in-place change reaches and a rebinding does not; one made after it sees the new binding."""
    loops = liveness.enclosing_loops(function, change)
    in_loops = {id(n) for loop in loops for n in walk(loop)}
    for node in walk(function):
        if getattr(node, "lineno", change.lineno) >= change.lineno and id(node) not in in_loops:
            continue
        held = []
        if rebinds_to_view(node, name):
            continue  # the same name, the same storage
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            held.append(node.value)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            held.extend(node.elts)
        elif isinstance(node, ast.Dict):
            held.extend(node.values)
        elif isinstance(node, ast.Call) and not _copies_arguments(node, analysis):
            held.extend([*node.args, *(k.value for k in node.keywords)])
        if any(holds(h, name) for h in held):
            return True
    return False


def _copies_arguments(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A torch function that is not a view: it keeps no reference to its arguments."""
    qualname = analysis.qualified_name(call.func)
    return qualname is not None and qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] not in VIEW_METHODS


def out_of_place(
    stmt: ast.stmt, name: str, analysis: FunctionAnalysis, ctx: FixContext, changes: Callable[[ast.stmt], bool]
) -> Fix | Refusal:
    """An in-place change of the input `name` made on a value the caller does not see:
    `x.add_(1)` → `x = x.add(1)`, `x += 1` → `x = x + 1`; other forms (tensor operands, whose type
    promotion an out-of-place op would not undo; subscript writes) work on a copy, made just before
    the first statement of the block that `changes` the input (there the input is known to be a
    tensor: an optional one is past its `is not None` test)."""
    function = analysis.function
    assert function is not None
    if _aliased(function.node, name, stmt, analysis):
        return Refusal(
            f"`{name}` (or a view of it) is held by another name before the change, which would no longer see it"
        )
    rewritten = _out_of_place_text(stmt, name, analysis, ctx)
    if rewritten is not None:
        edit = TextEdit(ctx.source.node_range(stmt), rewritten)
        title = f"Change a new tensor instead of the input `{name}`"
    else:
        located = liveness.locate(function.node, stmt)
        first = stmt
        if located is not None:
            _, block, index = located
            first = next(s for s in block[: index + 1] if s is stmt or changes(s))
        if ctx.source.lines[first.lineno - 1][: first.col_offset].strip():
            return Refusal(
                "the change shares its line with other code (`...: x[0] = 1`), where a copy cannot go before it"
            )
        line = first_line(first, ctx)
        indent = indent_of(ctx.source.lines[line - 1])
        edit = TextEdit(Range(Position(line - 1, 0), Position(line - 1, 0)), f"{indent}{name} = {name}.clone()\n")
        title = f"Work on a copy of the input `{name}`"
    return Fix(title, Applicability.UNSAFE, (edit,), ("the caller no longer sees the change",))


def _python_operands(values: list[ast.expr], analysis: FunctionAnalysis) -> bool:
    return all(isinstance(v, ast.Constant) or analysis.kind(v) is Kind.PYTHON for v in values)


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _out_of_place_text(stmt: ast.stmt, name: str, analysis: FunctionAnalysis, ctx: FixContext) -> str | None:
    """The out-of-place form of a change of `name` itself (not of a part of it, `x[0].add_(1)`)."""
    if isinstance(stmt, ast.AugAssign):
        operator = _OPERATORS.get(type(stmt.op))
        if operator is None or not isinstance(stmt.target, ast.Name) or not _python_operands([stmt.value], analysis):
            return None
        value = ctx.segment(stmt.value)
        atomic = isinstance(stmt.value, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript))
        return f"{name} = {name} {operator} {value if atomic else f'({value})'}"
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (
        not isinstance(call, ast.Call)
        or not isinstance(call.func, ast.Attribute)
        or not isinstance(call.func.value, ast.Name)
    ):
        return None
    method = call.func.attr.removesuffix("_")
    if method not in OUT_OF_PLACE or not _python_operands([*call.args, *(k.value for k in call.keywords)], analysis):
        return None
    arguments = ctx.segment(call)[len(ctx.segment(call.func)) :]
    return f"{name} = {name}.{method}{arguments}"


def select_for_cond(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
    """`torch.cond(p, lambda x: a, lambda x: b, (x,))` → `torch.where(p, (lambda x: a)(x), (lambda x: b)(x))`."""
    if len(call.args) != 4 or call.keywords:
        return Refusal(
            "only `torch.cond(pred, true_fn, false_fn, operands)` with four positional arguments is rewritten"
        )
    pred, *branches, operands = call.args
    if not analysis.kind(pred).is_tensor:
        return Refusal("the predicate is not known to be a tensor, and `torch.where` needs one")
    for branch in branches:
        if not isinstance(branch, ast.Lambda):
            return Refusal("a branch is not a lambda, so what it returns and calls is not known here")
        if isinstance(branch.body, (ast.Tuple, ast.List, ast.Dict)):
            return Refusal("a branch returns several values; `torch.where` selects one tensor")
        reason = impurity(branch.body, analysis, set())
        if reason is not None:
            return Refusal(reason)
    torch_name = ctx.torch_name
    if torch_name is None:
        return Refusal(ctx.no_torch_name)
    if isinstance(operands, (ast.Tuple, ast.List)):
        arguments = ", ".join(ctx.segment(e) for e in operands.elts)
    else:
        arguments = f"*{ctx.segment(operands)}"
    true_fn, false_fn = (f"({ctx.segment(b)})({arguments})" for b in branches)
    text = f"{torch_name}.where({ctx.segment(pred)}, {true_fn}, {false_fn})"
    return Fix(
        f"Select with `{torch_name}.where`, which CUDA graphs can record",
        Applicability.UNSAFE,
        (TextEdit(ctx.source.node_range(call), text),),
        (
            "both branches run, and inf or NaN in the one not taken can make the gradient NaN",
            *caveats([b.body for b in branches if isinstance(b, ast.Lambda)], analysis),
        ),
    )
