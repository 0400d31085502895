"""What an operation may do when it runs on values its guard used to exclude.

A predicated rewrite runs every branch on every call, so each operation of a branch now also sees
the values for which the original never ran it: `num / den` where the guard was `den != 0`,
`torch.log(p)` where it was `p > 0`, `torch.exp(x)` where it was `x.max() < 80`. The selected
output stays exact, but the operation may give inf or NaN on the discarded side, and
`torch.where`'s backward multiplies its zero gradient by that operation's derivative there:
0 × inf is NaN, and the NaN reaches the weights. Some operations raise instead (a bool tensor
negated, a singular matrix inverted).

`hazards(expr)` lists them. Where the operand is a tensor and the branch's predicate is one
element, the rewrite *shields* it: `torch.where(predicate, operand, 1)` feeds a value inside the
operation's domain on the discarded side, so forward and backward are
both exact (the selection passes the operand's own gradient where the branch runs, and none where
it does not). Otherwise the fix names the hazard, or is refused when the operation raises.
"""

from __future__ import annotations

import ast
import math
import weakref
from dataclasses import dataclass

from .. import torch_api
from ..inference import FunctionAnalysis, ModuleFacts
from ..kinds import Kind
from ..semantics import ancestors, statement_of, walk
from . import known_ops, liveness
from .purity import assigned_once, names_in, number_literal, plain_values
from .shapes import FLOATING

# Operations defined (finite, with a finite derivative) at 1 but not everywhere: roots, logarithms,
# inverses, and the gamma family's poles (division: `_DIVISORS`).
_AT_ONE = frozenset("log log2 log10 sqrt rsqrt reciprocal digamma lgamma polygamma".split())
# Finite at 0 but not everywhere: domains bounded on both sides, and what overflows for large inputs.
_AT_ZERO = frozenset("log1p acos asin atanh erfinv exp expm1 exp2 sinh cosh tan".split())
# Operations whose divisor is the second operand.
_DIVISORS = frozenset("div divide true_divide floor_divide fmod remainder".split())
# Binary operations that take two tensors: a Python number as either operand raises TypeError.
_TENSOR_PAIR = frozenset("maximum minimum fmax fmin".split())
# Reductions with no value for nothing: they raise on an empty tensor (`x.max()` where the guard
# was `x.sum() > 0`, which an empty `x` fails); `torch.max(a, b)` is elementwise and does not.
_NO_EMPTY = frozenset("max min amax amin argmax argmin kthvalue median nanmedian mode".split())
# Tensor attributes that are None until autograd sets them (review 9: `x.grad * 2` in the branch not taken).
_MAYBE_NONE = frozenset({"grad", "grad_fn"})
# Operations that raise on values a guard may exclude (a singular or non-positive-definite matrix).
_RAISING = frozenset(
    "inv cholesky cholesky_ex solve solve_triangular lu_factor matrix_power tensorinv tensorsolve".split()
)


@dataclass(frozen=True)
class Hazard:
    """One operation that misbehaves on some values: the operand to shield and the value that is
    safe for it ("1" or "0"), or None where nothing can be shielded."""

    node: ast.expr  # the operation
    operation: str  # as written: `/`, `torch.log`, `.sqrt()`
    operand: ast.expr | None
    safe: str | None
    raises: str | None = None  # why it raises, when it may: the fix is refused
    # the operand may have overflowed to inf on the values the condition excluded: shielded where it
    # can be, else the fix is unsafe with the hazard named (a refusal would give up on every product)
    overflow: bool = False
    may_raise: str | None = None  # why it raises if an unknown dtype is bool: the fix is unsafe, this named
    unshielded: str | None = None  # inside a function the branch calls: the fix is unsafe, this named
    # a derivative that is inf or NaN at some value (`torch.sin` at inf, a product of two tensors): the
    # fix is unsafe, this named (`known_ops.FINITE_BACKWARD`)
    unbounded: str | None = None
    # torch has no derivative for it (`//`): named, beside the shield it may also get
    no_derivative: str | None = None
    # the operation is torch's (a torch function, a tensor method, or an operator with a tensor
    # operand), so an operand of unknown kind is a tensor or a number torch takes as a 0-d one
    on_tensors: bool = False

    @property
    def named(self) -> str | None:
        """The change it makes, where it makes the fix unsafe rather than refused."""
        return self.may_raise or self.unshielded or self.unbounded

    def words(self) -> str:
        """Why no exact rewrite runs it on every call: a refusal's reason, or an unsafe fix's hazard."""
        if self.raises is not None:
            return self.raises
        if self.overflow:
            return (
                f"{self.operation} would also run on values the condition excluded, where an operand may overflow "
                "to inf, and torch.where's backward would multiply a zero gradient by it (NaN gradients)"
            )
        return (
            f"{self.operation} would also run on values the condition excluded, where it may give inf or NaN, and "
            "torch.where's backward would multiply a zero gradient by it (NaN gradients); it can be kept off "
            "those values only for a condition of one element and a tensor operand"
        )


def _not_bool(expr: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """`expr` is provably not a bool tensor: arithmetic with a Python number (a bool tensor and a
    number give int64 or floating), a function whose result is floating, or a name the function
    assigns only such values (by plain assignments: `y = x * 3`, then `y = y - 1`)."""
    if isinstance(expr, ast.Name) and expr.id not in seen:
        values = plain_values(expr.id, analysis)
        return bool(values) and all(_not_bool(value, analysis, seen | {expr.id}) for value in values)
    if isinstance(expr, ast.BinOp):
        return any(
            (isinstance(side, ast.Constant) and type(side.value) in (int, float)) or analysis.kind(side) is Kind.PYTHON
            for side in (expr.left, expr.right)
        )
    if isinstance(expr, ast.Call):
        qualname = analysis.qualified_name(expr.func)
        name = (qualname or "").rsplit(".", 1)[-1] or (expr.func.attr if isinstance(expr.func, ast.Attribute) else "")
        # floating results, or an operation torch refuses a bool tensor (`torch.relu(x)`: no bool result)
        return name in _FLOATING_RESULTS or (qualname is not None and "bool" in known_ops.dtype_limited(qualname))
    return False


def _bool_subtraction(node: ast.BinOp, analysis: FunctionAnalysis) -> Hazard | None:
    """`a - b` where both may be bool, one of them a tensor: torch raises for that (issue 67, review
    5: `x - y` of two bool tensors in the branch not taken raised on every call after the rewrite)."""
    sides = (node.left, node.right)

    def bool_tensor(side: ast.expr) -> bool:
        return analysis.kind(side).present is Kind.BOOL_TENSOR

    def tensor(side: ast.expr) -> bool:
        kind = analysis.kind(side).present
        return kind.is_tensor or (isinstance(side, ast.Name) and analysis.has_tensor_evidence(side.id))

    def may_be_bool(side: ast.expr) -> bool:
        if isinstance(side, ast.Constant):
            return isinstance(side.value, bool)
        kind = analysis.kind(side).present
        return kind in (Kind.BOOL_TENSOR, Kind.TENSOR, Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS) and not _not_bool(
            side, analysis
        )

    # torch refuses `-` with any bool tensor operand, whatever the other one is (`mask - 1`, review 9)
    if not any(tensor(side) and may_be_bool(side) for side in sides):
        return None
    if all(bool_tensor(side) or isinstance(side, ast.Constant) for side in sides):
        return Hazard(node, "`-`", None, None, raises="a branch subtracts two bool values (`-`), which raises")
    return Hazard(
        node,
        "`-`",
        None,
        None,
        may_raise=f"a branch computes `{ast.unparse(node)}`, whose dtypes graphmend does not know: with a bool "
        "tensor, `-` raises, and the rewrite runs that branch on every call",
    )


# Functions whose result is floating whatever their input's dtype: the elementwise ones, and softmax.
_FLOATING_RESULTS = FLOATING | frozenset(
    "softmax log_softmax mean std var log log2 log10 sqrt rsqrt exp2 tan asin acos atan sinh cosh asinh acosh atanh erf erfc "
    "erfinv lgamma digamma".split()
)


def hazards(expr: ast.AST, analysis: FunctionAnalysis) -> list[Hazard]:
    """The operations in `expr` that may give inf/NaN or raise on values outside their guard, and
    the calls of this file's functions whose bodies hold one (no shield reaches inside them)."""
    found: list[Hazard] = []
    for node in walk(expr):
        hazard = (
            _hazard(node, analysis)
            or (_in_callee(node, analysis) if isinstance(node, ast.Call) else None)
            or _unbounded_derivative(node, analysis)
        )
        if hazard is not None:
            found.append(hazard)
        if isinstance(node, (ast.BinOp, ast.Compare)):
            mismatch = _callers_shapes(node, analysis)
            if mismatch is not None:
                found.append(mismatch)
    return found


def _callers_shapes(node: ast.BinOp | ast.Compare, analysis: FunctionAnalysis) -> Hazard | None:
    """`x + b` of two tensors the caller passes (parameters, or computed from different ones): their
    shapes may broadcast only where the branch runs (an empty `b` as "no bias"), so run on every call
    it raises where the original did not (review 9)."""
    operands = _elementwise_operands(node)
    if analysis.function is None or operands is None:
        return None
    parameters = {a.arg for a in (*analysis.function.node.args.args, *analysis.function.node.args.kwonlyargs)}
    for side in operands:
        kind = analysis.kind(side)
        if not (kind.is_tensor or kind is Kind.UNKNOWN) or isinstance(side, ast.Constant):
            return None
    at = statement_of(node, analysis.function.node)
    sides = [_parameters_reached(side, analysis, parameters - {"self"}, at, frozenset()) for side in operands]
    if not all(sides) or sides[0] == sides[1] or _broadcast_anyway(node, sides, analysis, parameters - {"self"}):
        return None
    symbol = _SYMBOLS.get(type(node.op), "an operator") if isinstance(node, ast.BinOp) else "a comparison"
    return _raising(
        node,
        f"`{symbol}`",
        f"a branch computes `{ast.unparse(node)}` of tensors the caller passes, whose shapes graphmend does not know "
        "to broadcast: where they do not (a sentinel of another shape the condition excluded), it raises, and the "
        "rewrite computes it on every call",
    )


def _elementwise_operands(node: ast.BinOp | ast.Compare) -> tuple[ast.expr, ast.expr] | None:
    """The two operands torch broadcasts together: `a + b`, `a == b` (one comparison, not `is`/`in`)."""
    if isinstance(node, ast.BinOp):
        return None if isinstance(node.op, (ast.MatMult, ast.Pow, ast.LShift, ast.RShift)) else (node.left, node.right)
    if len(node.ops) != 1 or isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return None
    return node.left, node.comparators[0]


def _broadcast_anyway(
    node: ast.BinOp | ast.Compare, sides: list[set[str]], analysis: FunctionAnalysis, parameters: set[str]
) -> bool:
    """Whether the same two caller tensors are combined elementwise on the path the branch of `node`
    did not take too (the `if`'s other branch: `x_1 + y_1` beside `x_1 - y_1`), or before the `if`
    in the function's own block: where their shapes do not broadcast, the original raised as well."""
    assert analysis.function is not None
    function = analysis.function.node
    chain = ancestors(node, function)
    branch: tuple[ast.If, list[ast.stmt]] | None = None
    for child, holder in zip(chain, chain[1:]):
        if isinstance(holder, ast.If) and any(child is s for s in [*holder.body, *holder.orelse]):
            branch = (holder, holder.orelse if any(child is s for s in holder.body) else holder.body)
            break
    if branch is None:
        return False
    the_if, other_block = branch
    wanted = {frozenset(sides[0]), frozenset(sides[1])}
    for other in walk(function):
        if other is node or not isinstance(other, (ast.BinOp, ast.Compare)):
            continue
        operands = _elementwise_operands(other)
        if operands is None:
            continue
        statement = statement_of(other, function)
        if statement is None:
            continue
        in_function_block = any(statement is s for s in getattr(function, "body", []))
        if not (any(statement is s for s in other_block) or (in_function_block and statement.lineno < the_if.lineno)):
            continue
        found = {
            frozenset(_parameters_reached(side, analysis, parameters, statement, frozenset())) for side in operands
        }
        if found == wanted:
            return True
    return False


def _parameters_reached(
    expr: ast.expr, analysis: FunctionAnalysis, parameters: set[str], at: ast.stmt | None, seen: frozenset[str]
) -> set[str]:
    """The parameters `expr` (read just before `at`) is computed from, through the values its names
    may hold there (`h = self.lin(x)`: `x`; review 11: `h + y` of a layer's output and a caller's
    tensor)."""
    function = analysis.function
    reached: set[str] = set()
    for name in names_in(expr) - seen:
        if name in parameters:
            reached.add(name)
            continue
        values = liveness.reaching_values(function.node, at, name) if function is not None and at is not None else None
        if values is None:
            value = assigned_once(name, analysis)
            values = [] if value is None else [(None, value)]
        for where, value in values:
            if where is not None or not (isinstance(value, ast.Name) and value.id == name):
                reached |= _parameters_reached(value, analysis, parameters, where, seen | {name})
    return reached


# A function's first hazardous operation (its text), by module and function: judged once each.
_CALLEE_HAZARDS: weakref.WeakKeyDictionary[ModuleFacts, dict[int, tuple[str, bool] | None]] = (
    weakref.WeakKeyDictionary()
)


def _in_callee(call: ast.Call, analysis: FunctionAnalysis) -> Hazard | None:
    """A call of a function of this file whose body runs a hazardous operation (`_ratio(x, y)`
    taking `torch.log(a)`): the shields of the rewrite are written in the branch, not inside the
    function, so the fix is unsafe with the operation named (issue 67, review 5)."""
    if analysis.function is None:
        return None
    callee = analysis.module.regions.resolve_call(call, analysis.function)
    if callee is None:
        return None
    known = _CALLEE_HAZARDS.setdefault(analysis.module, {})
    key = id(callee.node)
    if key not in known:
        known[key] = None  # a recursive call finds none while its body is read
        inner = FunctionAnalysis(analysis.module, callee)
        inner.run()
        found = hazards(callee.node, inner)  # its own domains first, then overflow, a callee's, a bool's `-`
        first = min(
            found,
            key=lambda h: (h.may_raise is not None, h.unshielded is not None, h.unbounded is not None, h.overflow),
            default=None,
        )
        known[key] = None if first is None else (first.operation, first.may_raise is not None)
    found_first = known[key]
    if found_first is None:
        return None
    operation, raising = found_first
    effect = "may raise" if raising else "may give inf or NaN (and NaN gradients)"
    return Hazard(
        call,
        f"`{callee.name}`",
        None,
        None,
        unshielded=f"a branch calls `{callee.name}`, whose {operation} {effect} on values the condition excluded: "
        "the rewrite shields operations in the branch itself, not inside a function it calls",
    )


def _unbounded_derivative(node: ast.AST, analysis: FunctionAnalysis) -> Hazard | None:
    """An operation whose derivative is inf or NaN at some input (`torch.sin` at inf, `sigmoid` at
    NaN, `x * y` where `y` is inf, `x ** 2` past overflow), unless a shield already feeds it a safe
    value (`_hazard` found that first): on the side not taken the zero gradient times that derivative
    is NaN, and it reaches the weights (issue 67, review 7: a branch kept from inf by
    `torch.isfinite(x).all()`). Only operations on `known_ops.FINITE_BACKWARD`, and products by a
    number, keep a zero gradient zero on every value."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            exponent = number_literal(node.right)
            if exponent in (0.0, 1.0) or not _maybe_tensor(node.left, analysis):
                return None
        elif isinstance(node.op, (ast.Mult, ast.MatMult)):
            if _finite_number(node.left, analysis) or _finite_number(node.right, analysis):
                return None
            if not (_maybe_tensor(node.left, analysis) or _maybe_tensor(node.right, analysis)):
                return None
        else:
            return None
        return _unbounded(node, f"`{ast.unparse(node)}`")
    if not isinstance(node, ast.Call):
        return None
    name = _allowlisted(node, analysis)
    if name is None or known_ops.finite_backward(name):
        return None
    short = name.rsplit(".", 1)[-1]
    operands = list(node.args)
    if short in known_ops.SCALINGS and any(_finite_number(o, analysis) for o in operands):
        return None
    entry = known_ops.known(name)
    if entry is None or (entry.shielded and short != "pow"):
        return None  # not allowlisted (named as such), or a domain `_hazard` shields
    if short == "pow" and any(number_literal(o) in (0.0, 1.0) for o in operands[-1:]):
        return None
    return _unbounded(node, f"`{name.replace(known_ops.METHOD, '.', 1)}`")


def _unbounded(node: ast.expr, operation: str) -> Hazard:
    return Hazard(
        node,
        operation,
        None,
        None,
        unbounded=f"a branch computes {operation}, whose derivative is inf or NaN at some values (inf, NaN, or a "
        "value that overflowed), which the condition may have kept from it: torch.where's backward multiplies the "
        "zero gradient of the side not taken by it, and the gradients become NaN",
    )


def _finite_number(expr: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """A Python number finite in every floating dtype, so that a product by it has a finite
    derivative: a written one within float16's range (`1e39` and `2 ** 200` are inf in float32,
    `1e5` in float16: review 10), or one of Python kind computed from such numbers, names the
    function binds to such, attributes (a module's `self.scaling`) and calls that keep a finite
    number finite (`math.sqrt`, `len`) — not from the caller (`scale=float("inf")`, review 8), and
    with no power or division of written numbers (`1 / 1e-39`)."""
    value = number_literal(expr)
    if value is not None:
        return abs(value) <= _HALF_MAX
    if analysis.kind(expr) is not Kind.PYTHON:
        return False
    parameters = analysis.function.parameter_names if analysis.function is not None else frozenset()
    for node in walk(expr):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in parameters:
                return False
            values = plain_values(node.id, analysis) if node.id not in seen else []
            if not all(_finite_number(v, analysis, seen | {node.id}) for v in values):
                return False
        elif isinstance(node, ast.Constant) and not (
            number_literal(node) is None or abs(number_literal(node) or 0.0) <= _HALF_MAX
        ):
            return False
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.Div, ast.FloorDiv, ast.Mod)):
            if number_literal(node.right) is not None or number_literal(node.left) is not None:
                return False
        elif isinstance(node, ast.Call) and _called(node, analysis) not in _FINITE_NUMBER_CALLS:
            return False
    return True


def _called(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """What `call` calls: a qualified name, or a builtin's name (`len`)."""
    func = call.func
    if isinstance(func, ast.Name) and analysis.is_builtin(func.id):
        return func.id
    return analysis.qualified_name(func)


# Calls whose result is a finite number wherever their arguments are (not `float("inf")`, `math.exp`).
_FINITE_NUMBER_CALLS = frozenset({"len", "int", "round", "abs", "min", "max", "math.sqrt", "math.floor", "math.ceil"})


def _maybe_tensor(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    kind = analysis.kind(expr)
    return kind.is_tensor or kind in (Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS)


def _allowlisted(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The allowlist's name of what `call` runs (`torch.sin`, `Tensor.sigmoid`,
    `torch.nn.functional.gelu`, `torch.nn.Linear` for `self.proj(...)`), or None."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return qualname if known_ops.known(qualname) is not None else None
    if not isinstance(func, ast.Attribute):
        return None
    if analysis.is_self(func.value):
        owner = analysis.owner
        if owner is None:
            return None
        constructors = analysis.module.constructors(owner).get(func.attr, frozenset())
        layers = [c for c in constructors if known_ops.is_layer(c) and known_ops.known(c) is not None]
        return next((c for c in sorted(layers) if not known_ops.finite_backward(c)), layers[0] if layers else None)
    if analysis.kind(func.value).is_tensor or analysis.kind(func.value) is Kind.UNKNOWN:
        name = known_ops.METHOD + func.attr
        return name if known_ops.known(name) is not None else None
    return None


def shieldable(hazard: Hazard, analysis: FunctionAnalysis) -> bool:
    """Whether the operand can be selected on the discarded side: a tensor, or a value of unknown
    kind that torch's operation takes (a number becomes a 0-d tensor of its own category, which
    changes neither the result's type nor its dtype); not a Python number in Python arithmetic."""
    if hazard.operand is None or hazard.safe is None:
        return False
    kind = analysis.kind(hazard.operand)
    return kind.is_tensor or (kind is Kind.UNKNOWN and hazard.on_tensors)


# Operators as written.
_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.MatMult: "@",
    ast.Pow: "**",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
}
# The operators that divide.
_DIVISIONS: dict[type[ast.operator], str] = {op: _SYMBOLS[op] for op in (ast.Div, ast.FloorDiv, ast.Mod)}


def _hazard(node: ast.AST, analysis: FunctionAnalysis) -> Hazard | None:
    if isinstance(node, ast.Assign):
        return unpacking(node)
    if isinstance(node, ast.Attribute):
        return _attribute_hazard(node, analysis)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Sub):
            subtraction = _bool_subtraction(node, analysis)
            if subtraction is not None:
                return subtraction
        kinds = (analysis.kind(node.left), analysis.kind(node.right))
        if not any(k.is_tensor for k in kinds):
            return _python_arithmetic(node, kinds)
        symbol = _DIVISIONS.get(type(node.op))
        underived = _no_derivative(node, "`//`") if isinstance(node.op, ast.FloorDiv) else None
        if symbol is not None and not _nonzero_literal(node.right):
            return Hazard(node, f"`{symbol}`", node.right, "1", on_tensors=True, no_derivative=underived)
        if underived is not None:
            return _raising(node, "`//`", underived)
        if isinstance(node.op, ast.Pow) and not _polynomial_exponent(node.right):
            return Hazard(node, "`**`", node.left, "1", on_tensors=True)
        return _overflowing_operand(node, analysis)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        kind = analysis.kind(node.operand).present
        if kind is Kind.BOOL_TENSOR:
            return Hazard(node, "`-`", None, None, raises="a branch negates a bool tensor (`-`), which raises")
        if kind in (Kind.TENSOR, Kind.UNKNOWN, Kind.TENSOR_ON_SOME_PATHS) and not _not_bool(node.operand, analysis):
            return Hazard(
                node,
                "`-`",
                None,
                None,
                may_raise=f"a branch negates `{ast.unparse(node.operand)}`, whose dtype graphmend does not know: if "
                "it is a bool tensor, `-` raises, and the rewrite runs that branch on every call",
            )
        return None
    if not isinstance(node, ast.Call):
        return None
    qualname = analysis.qualified_name(node.func)
    pooling = _pooling_hazard(node, qualname)
    if pooling is not None:
        return pooling
    if qualname is not None and qualname.startswith("torch."):
        name = qualname.rsplit(".", 1)[-1]
        if (name in _RAISING and qualname.startswith("torch.linalg.")) or qualname in (
            "torch.inverse",
            "torch.cholesky",
        ):
            return Hazard(
                node,
                f"`{qualname}`",
                None,
                None,
                raises=f"a branch calls `{qualname}`, which raises on values the condition may exclude (a singular matrix)",
            )
        operation = f"`{qualname}`"
        operands = [*node.args, *(k.value for k in node.keywords if k.arg in ("input", "other", "exponent"))]
    elif isinstance(node.func, ast.Attribute) and (
        analysis.kind(node.func.value).is_tensor
        or (node.func.attr in _NO_EMPTY and analysis.kind(node.func.value) is Kind.UNKNOWN)
    ):
        name = node.func.attr
        operation = f"`.{name}()`"
        operands = [node.func.value, *node.args]
    else:
        return None
    return (
        _number_for_tensor(node, operation, name, operands, analysis)
        or _empty_reduction(node, operation, name, operands)
        or _view_hazard(node, operation, name, operands)
        or _empty_reshape(node, operation, name, operands)
        or _unfitting_fill(node, operation, name, operands)
        or _function_hazard(node, operation, name, operands)
    )


def unpacking(node: ast.Assign) -> Hazard | None:
    """`h, w = x.shape[-2:]`, `a, b = x.unbind(0)`: unpacking raises ValueError where the number
    of values differs (a tensor of another rank or size, which may never have reached the branch);
    a literal tuple of as many values cannot (review 9)."""
    value = node.value
    for target in node.targets:
        if not isinstance(target, (ast.Tuple, ast.List)):
            continue
        if (
            isinstance(value, (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in value.elts)
            and len(value.elts) == len(target.elts)
        ):
            continue
        return _raising(
            value,
            "unpacking",
            f"a branch unpacks `{ast.unparse(target)} = {ast.unparse(value)}`, which raises ValueError where the "
            "number of values differs (a tensor of another rank or size), and the rewrite runs it on every call",
        )
    return None


def _no_derivative(node: ast.expr, operation: str) -> str:
    """Why a floor division the rewrite runs on every call changes training: torch has no
    derivative for it (review 9: `x // 2` where `x` requires grad)."""
    return (
        f"a branch computes `{ast.unparse(node)}`: torch has no derivative for {operation}, so where an operand "
        'requires grad, backward raises ("derivative for aten::floor_divide is not implemented"), also where '
        "the original did not run the branch"
    )


def _python_arithmetic(node: ast.BinOp, kinds: tuple[Kind, Kind]) -> Hazard | None:
    """Arithmetic with no operand known to be a tensor: a number's ZeroDivisionError or
    OverflowError on the values a guard excluded, or, of operands of unknown kind, a tensor's NaN."""
    symbol = _DIVISIONS.get(type(node.op))
    if symbol is not None and Kind.UNKNOWN in kinds and not _nonzero_literal(node.right):
        # `y / y` of values not known to be tensors nor numbers: a tensor's NaN, or a number's
        # ZeroDivisionError, on the values a guard excluded; `//` and `%` raise for an integer
        # tensor's zero too (issue 67, review 6)
        return Hazard(node, f"`{symbol}`", None, None)
    if symbol is not None and not _nonzero_literal(node.right):
        return _raising(  # numbers: `x.shape[0] / x.shape[1]` of an empty tensor, which `x.sum() > 0` excluded
            node,
            f"`{symbol}`",
            f"a branch computes `{ast.unparse(node)}`, which raises ZeroDivisionError where "
            f"`{ast.unparse(node.right)}` is 0, and the rewrite computes it on every call",
        )
    if isinstance(node.op, ast.Pow) and not all(isinstance(side, ast.Constant) for side in (node.left, node.right)):
        return _raising(  # numbers: `n ** -1` of a 0, `1.5 ** n` of a large `n` (review 9)
            node,
            "`**`",
            f"a branch computes `{ast.unparse(node)}`, which raises ZeroDivisionError for 0 to a negative power "
            "and OverflowError past a float's range (or, of a tensor, may give inf or NaN), and the rewrite "
            "computes it on every call",
        )
    return None  # Python arithmetic (a number at trace time)


def _attribute_hazard(node: ast.Attribute, analysis: FunctionAnalysis) -> Hazard | None:
    """`x.imag` of a tensor that may be real, `x.grad` that may be None: read on every call after
    the rewrite (review 9)."""
    if isinstance(node, ast.Attribute) and node.attr == "imag" and analysis.kind(node.value).is_tensor:
        return _raising(
            node,
            "`.imag`",
            f"a branch reads `{ast.unparse(node)}`, which raises for a tensor that is not complex (graphmend does not "
            "know its dtype), and the rewrite runs the branch on every call",
        )
    if isinstance(node, ast.Attribute) and node.attr in _MAYBE_NONE and isinstance(node.ctx, ast.Load):
        return _raising(
            node,
            f"`.{node.attr}`",
            f"a branch reads `{ast.unparse(node)}`, which is None where no backward has filled it (or after "
            "`zero_grad()`): using it raises TypeError, and the rewrite runs the branch on every call",
        )
    return None


def _raising(node: ast.expr, operation: str, words: str) -> Hazard:
    """An operation that may raise on values the condition excluded: the fix is unsafe, `words` named."""
    return Hazard(node, operation, None, None, may_raise=words)


def _pooling_hazard(node: ast.Call, qualname: str | None) -> Hazard | None:
    """`F.avg_pool1d(h, 2)`: it raises for a tensor with an empty dimension to pool over (an
    adaptive average's backward too), which a condition like `h.sum() > 0` excludes (review 8)."""
    if qualname is None or not qualname.startswith("torch.nn.functional.") or "pool" not in qualname:
        return None
    return _raising(
        node,
        f"`{qualname}`",
        f"a branch calls `{qualname}`, which raises for a tensor with an empty dimension to pool over "
        "(its backward too, for an adaptive average), and the rewrite calls it on every call",
    )


def _overflowing_operand(node: ast.BinOp, analysis: FunctionAnalysis) -> Hazard | None:
    """`x * x * x` where the guard was `x.abs().max() < 1e10`: on the excluded values `x * x` is
    inf, and the backward of the outer product multiplies the zero gradient by it (NaN). Likewise
    `x ** 3` (its derivative `3 * x ** 2`) and `(x * x) ** 2`. The overflowing operand gets 0 on the
    discarded side, where every product and power is finite with a finite derivative: `False` where
    the operand may be a bool tensor, which `0` would promote to int64 and `False` promotes nothing."""
    symbol = _SYMBOLS[type(node.op)] if isinstance(node.op, (ast.Mult, ast.MatMult, ast.Pow)) else None
    if symbol is None:
        return None
    if isinstance(node.op, ast.Pow):
        exponent = number_literal(node.right)
        if exponent is not None and (exponent >= 3 or (exponent > 1 and _may_overflow(node.left, analysis))):
            return _zeroed(node, symbol, node.left, analysis)
        return None
    for side, other in ((node.left, node.right), (node.right, node.left)):
        if number_literal(other) is None and _may_overflow(side, analysis):
            return _zeroed(node, symbol, side, analysis)
    return None


def _zeroed(node: ast.BinOp, symbol: str, operand: ast.expr, analysis: FunctionAnalysis) -> Hazard:
    safe = "0" if _not_bool(operand, analysis) else "False"
    return Hazard(node, f"`{symbol}`", operand, safe, on_tensors=True, overflow=True)


# Functions whose result grows without bound faster than their input: a product of them, or with
# them, may overflow where the inputs are finite.
_GROWING = frozenset("exp expm1 exp2 sinh cosh pow matmul mm bmm einsum prod cumprod outer kron".split())


def _may_overflow(expr: ast.expr, analysis: FunctionAnalysis, seen: frozenset[str] = frozenset()) -> bool:
    """`expr` may be inf where its inputs are finite: a product of two computed values, a power
    above one, an exponential, a matrix product, or a name the function assigns once to one. Sums
    and products by a number written in the code are taken to stay finite: they overflow only for
    inputs already within that factor of the dtype's largest value."""
    if isinstance(expr, ast.Name) and expr.id not in seen:
        value = assigned_once(expr.id, analysis)
        return value is not None and _may_overflow(value, analysis, seen | {expr.id})
    if isinstance(expr, ast.BinOp):
        if analysis.kind(expr.left) is Kind.PYTHON and analysis.kind(expr.right) is Kind.PYTHON:
            return False
        if isinstance(expr.op, (ast.Mult, ast.MatMult)):
            return number_literal(expr.left) is None and number_literal(expr.right) is None
        if isinstance(expr.op, ast.Pow):
            exponent = number_literal(expr.right)
            return exponent is None or exponent > 1
        return False
    if isinstance(expr, ast.Call):
        qualname = analysis.qualified_name(expr.func) or ""
        if qualname.startswith("torch."):
            return qualname.rsplit(".", 1)[-1] in _GROWING
        return (
            isinstance(expr.func, ast.Attribute)
            and expr.func.attr in _GROWING
            and analysis.kind(expr.func.value).is_tensor
        )
    return False


def _empty_reduction(node: ast.Call, operation: str, name: str, operands: list[ast.expr]) -> Hazard | None:
    """`x.max()`, `torch.amax(x, -1)`: raises on an empty tensor, which the condition may have excluded."""
    if name not in _NO_EMPTY or (name in ("max", "min") and len(operands) > 1 and not _is_dim(operands[1])):
        return None
    return Hazard(node, operation, None, None, raises=f"a branch takes {operation}, which raises on an empty tensor")


def _view_hazard(node: ast.Call, operation: str, name: str, operands: list[ast.expr]) -> Hazard | None:
    """`x.view(...)` to a shape: it raises for a tensor whose strides do not allow the view (a
    transposed or sliced one the caller passes; issue 67, review 7). `x.view(torch.float16)`
    reinterprets the bytes and is not one."""
    if name != "view" or operation != "`.view()`" or len(operands) < 2 or _is_dtype(operands[1]):
        return None
    return _raising(
        node,
        operation,
        "a branch calls `.view()`, which raises for a tensor whose strides do not allow the view (a "
        "transposed or sliced one the caller passes), and the rewrite calls it on every call",
    )


def _empty_reshape(node: ast.Call, operation: str, name: str, operands: list[ast.expr]) -> Hazard | None:
    """`x.reshape(x.size(0), -1)`: with a size that may be 0 beside the -1 to infer, it raises for a
    tensor of no elements ("the unspecified dimension size -1 can be any value"), which a condition
    like `x.sum() > 0` excludes."""
    if name not in ("view", "reshape", "unflatten") or len(operands) < 2:
        return None
    sizes = operands[2:] if name == "unflatten" else operands[1:]
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = list(sizes[0].elts)
    fixed = [size for size in sizes if (number_literal(size) or 0) > 1]
    if fixed:  # `x.unflatten(0, (2, -1))` of a dimension of 3 (review 9)
        return _raising(
            node,
            operation,
            f"a branch calls {operation} with the fixed size {ast.unparse(fixed[0])}: where the tensor's size does not "
            "fit it, it raises, and the rewrite calls it on every call",
        )
    if not any(number_literal(size) == -1 for size in sizes) or all(
        number_literal(size) not in (None, 0) for size in sizes
    ):
        return None
    return _raising(
        node,
        operation,
        f"a branch calls {operation} with -1 beside a size graphmend does not know is not 0: for a tensor "
        "of no elements it raises, and the rewrite calls it on every call",
    )


_FILLS = frozenset({"masked_fill", "fill", "index_fill", "full_like", "new_full"})
_HALF_MAX = 65504.0


def _unfitting_fill(node: ast.Call, operation: str, name: str, operands: list[ast.expr]) -> Hazard | None:
    """`s.masked_fill(m, -1e9)`: a fill value past half precision's range raises for a float16
    tensor, and inf or NaN for an integer one ("value cannot be converted ... without overflow"),
    where the original may never have filled it (review 9)."""
    if name not in _FILLS or not operands:
        return None
    value = _fill_literal(operands[-1])
    if value is None or (math.isfinite(value) and abs(value) <= _HALF_MAX):
        return None
    return _raising(
        node,
        operation,
        f"a branch calls {operation} with {ast.unparse(operands[-1])}, which torch cannot convert to a float16 (past "
        "its range) or an integer tensor (inf, NaN) without overflow: it raises for one, also where the original "
        "did not run the branch",
    )


def _fill_literal(expr: ast.expr) -> float | None:
    """A number written as one: `-1e9`, `float("-inf")`, `-float("inf")`, `math.inf`."""
    sign = 1.0
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        sign = -1.0 if isinstance(expr.op, ast.USub) else 1.0
        expr = expr.operand
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return sign * float(expr.value)
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Constant)
        and isinstance(expr.args[0].value, str)
    ):
        try:
            return sign * float(expr.args[0].value)
        except ValueError:
            return None
    if isinstance(expr, ast.Attribute) and expr.attr in ("inf", "nan") and isinstance(expr.value, ast.Name):
        return sign * float(expr.attr)
    return None


def _is_dtype(expr: ast.expr) -> bool:
    """`x.view(torch.float16)`: a reinterpretation of the bytes, not a shape."""
    return isinstance(expr, ast.Attribute) and expr.attr in torch_api.PYTHON_VALUE_ATTRIBUTES


def _is_dim(expr: ast.expr) -> bool:
    """A dimension argument (`x.max(-1)`), not a second tensor (`torch.max(a, b)`)."""
    return number_literal(expr) is not None


def _number_for_tensor(
    node: ast.Call, operation: str, name: str, operands: list[ast.expr], analysis: FunctionAnalysis
) -> Hazard | None:
    """`torch.maximum(t, 0.0)`: a Python number where only a tensor is taken raises TypeError, so a
    branch that did it only where its guard held would now raise on every call."""
    if name not in _TENSOR_PAIR or not any(analysis.kind(o) is Kind.PYTHON for o in operands):
        return None
    return Hazard(
        node, operation, None, None, raises=f"a branch calls {operation} with a Python number, which raises TypeError"
    )


def _function_hazard(node: ast.Call, operation: str, name: str, operands: list[ast.expr]) -> Hazard | None:
    """`torch.log(x)` / `x.log()`: the input; `torch.div(a, b)` / `a.div(b)`: the divisor;
    `torch.pow(a, b)`: the base unless the exponent is a whole non-negative number."""
    if not operands:
        return None
    if name in _DIVISORS:
        underived = _no_derivative(node, operation) if name == "floor_divide" else None
        if len(operands) > 1 and not _nonzero_literal(operands[1]):
            return Hazard(node, operation, operands[1], "1", on_tensors=True, no_derivative=underived)
        return _raising(node, operation, underived) if underived is not None else None
    if name == "pow":
        return (
            Hazard(node, operation, operands[0], "1", on_tensors=True)
            if len(operands) > 1 and not _polynomial_exponent(operands[1])
            else None
        )
    if name in _AT_ONE:
        return Hazard(node, operation, operands[0], "1", on_tensors=True)
    if name in _AT_ZERO:
        return Hazard(node, operation, operands[0], "0", on_tensors=True)
    return None


def _nonzero_literal(expr: ast.expr) -> bool:
    """A number written in the code whose inverse is finite in every floating dtype: `x / 2` is
    finite wherever `x` is, with a finite derivative (`x / 1e-46` divides by 0 in float32, and `1 /
    1e-5` is past float16's range: review 10)."""
    value = number_literal(expr)
    return value is not None and value != 0 and abs(value) >= 1 / _HALF_MAX


def _polynomial_exponent(expr: ast.expr) -> bool:
    """`x ** 2`: a whole, non-negative power is finite (with a finite derivative) wherever `x` is."""
    value = number_literal(expr)
    return value is not None and value >= 0 and float(value).is_integer()
