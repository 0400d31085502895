"""What keeping a message in the graph, or deferring it, may change (the hazards and refusals of
`deferral`'s plans): Python numbers the message formats, on whose values Dynamo then guards
(`recompiles`); code after the message that may raise, before which a replayed message would not
be shown (`may_raise_after`); and tensors the message shows that the function changes in place
later, whose later values a deferred message would show (`refuse_mutated`)."""

from __future__ import annotations

import ast

from ..analysis.aliases import loop_nodes, written_after
from ..analysis.purity import names_in
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..messages import is_message
from ..semantics import FunctionInfo, self_stores, walk
from .base import FixContext, Refused
from .message_text import printed_values


def recompiles(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> list[str]:
    """The hazard of Python numbers the message formats that may change between calls."""
    changing = _guarded_numbers(call, analysis, ctx)
    if not changing:
        return []
    names = ", ".join(f"`{name}`" for name, _ in changing)
    known = all(number for _, number in changing)
    return [
        f"{'' if known else 'if '}{names} {'are Python numbers' if len(changing) > 1 else 'is a Python number'}"
        f"{':' if known else ','} Dynamo guards on "
        f"{'its' if len(changing) == 1 else 'their'} value once the message is formatted in the graph, and a "
        "new value compiles the function again (pass it as a tensor, or format the message outside the "
        "compiled code)"
    ]


# Expressions and statements that cannot raise once traced: names, constants and their
# containers, attribute reads, `is` tests, `not`, `and`/`or`, plain assignments and returns.
_INERT = (
    ast.Name,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.Attribute,
    ast.expr_context,
    ast.BoolOp,
    ast.boolop,
    ast.unaryop,
    ast.cmpop,
    ast.operator,
    ast.IfExp,
    ast.keyword,
    ast.Starred,
    ast.Return,
    ast.Pass,
    ast.Expr,
    ast.Assign,
    ast.AnnAssign,
    ast.If,
)


def may_raise_after(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """Whether code of the function that runs after `call` may raise (a tensor operation, a call,
    an index): a deferred message would then never be replayed. Other messages do not count."""
    if analysis.function is None:
        return True
    function = analysis.function.node
    again = loop_nodes(function, call)
    end_line = call.end_lineno or call.lineno
    later = [n for n in walk(function) if isinstance(n, ast.stmt) and (n.lineno > end_line or id(n) in again)]
    quiet: set[int] = set()
    for statement in later:
        for node in walk(statement):
            if id(node) in quiet or isinstance(node, ast.stmt) and node is not statement:
                continue  # statements are visited on their own: a loop's body may hold the call itself
            if isinstance(node, ast.Call) and (node is call or is_message(node, analysis)):
                quiet |= {id(n) for n in walk(node)}
            elif not _inert(node, analysis):
                return True
    return False


def _inert(node: ast.AST, analysis: FunctionAnalysis) -> bool:
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) or (
            isinstance(node.op, ast.USub) and analysis.kind(node.operand) is Kind.TENSOR
        )
    if isinstance(node, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
    if isinstance(node, ast.BinOp):  # a number tensor and a number: elementwise, no shapes to disagree
        operands = (node.left, node.right)
        return any(analysis.kind(o) is Kind.TENSOR for o in operands) and any(
            isinstance(o, ast.Constant) and type(o.value) in (int, float) for o in operands
        )
    if isinstance(node, ast.Call):
        return _elementwise_on_a_tensor(node, analysis)
    return isinstance(node, _INERT)


# Elementwise functions of one number tensor that give inf or NaN rather than raise; and copies.
_UNARY = frozenset(
    """
    sin cos tan tanh sigmoid relu gelu silu exp expm1 log log1p log2 log10 sqrt rsqrt abs neg negative floor ceil
    round trunc sign square reciprocal erf erfc float double half bfloat16 detach clone contiguous
    """.split()
)


def _elementwise_on_a_tensor(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`torch.sin(x)` or `x.float()` on a number tensor (not a bool one: `-mask` raises)."""
    if call.keywords:
        return False
    qualname = analysis.qualified_name(call.func)
    if qualname is not None:
        module, _, name = qualname.rpartition(".")
        return (
            module == "torch" and name in _UNARY and len(call.args) == 1 and analysis.kind(call.args[0]) is Kind.TENSOR
        )
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in _UNARY
        and not call.args
        and analysis.kind(func.value) is Kind.TENSOR
    )


def _guarded_numbers(call: ast.Call, analysis: FunctionAnalysis, ctx: FixContext) -> list[tuple[str, bool]]:
    """Python values a message reads that may change between calls, each with whether it is known
    to be a number: the compiled function's parameters (neither tensors nor known objects), `self.`
    attributes the class assigns outside `__init__` (`self.calls += 1`), items of containers
    (`state["step"]`), module-level names some function rebinds (`global`), and `len()` of a
    container. The break ran the message eagerly; a message kept in the graph makes Dynamo guard on
    such a value, and a new value recompiles (measured: 1 graph became 8 over 12 calls)."""
    function = analysis.function
    if function is None:
        return []
    found: dict[str, bool] = {}
    pending: list[ast.AST] = list(printed_values(call))
    while pending:
        node = pending.pop()
        changing = _changing_value(node, analysis, function)
        if changing is not None:
            found.setdefault(ctx.segment(node), changing)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found.items())


_NOT_GUARDED = (Kind.CONTAINER, Kind.LOGGER, Kind.SELF, Kind.NUMPY, Kind.NONE)


def _changing_value(node: ast.AST, analysis: FunctionAnalysis, function: FunctionInfo) -> bool | None:
    """For a Python value that may differ between calls: whether it is known to be a number; None
    for anything else."""
    if not isinstance(node, ast.expr) or analysis.kind(node).is_tensor or analysis.kind(node) in _NOT_GUARDED:
        return None
    known = analysis.kind(node) is Kind.PYTHON
    if isinstance(node, ast.Name):
        if node.id in function.parameter_names and node.id not in ("self", "cls"):
            return known
        if node.id in analysis.index.declared_global and node.id not in analysis.shadowed_names:
            return known  # a module-level counter some function rebinds
        return None
    if isinstance(node, ast.Attribute) and analysis.is_self(node.value):
        owner = function.method.owner if function.method is not None else None
        if owner is not None and any(
            store_function.node.name != "__init__" for store_function, _ in self_stores(owner, node.attr)
        ):
            return known
        return None
    if (
        isinstance(node, ast.Subscript)
        and not _is_size(node.value)
        and analysis.kind(node.value)
        in (
            Kind.CONTAINER,
            Kind.UNKNOWN,
        )
    ):
        return known if not analysis.used_as_tensor(node.value) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and analysis.is_builtin("len")
        and len(node.args) == 1
        and not analysis.kind(node.args[0]).is_tensor
    ):
        return True
    return None


def _is_size(node: ast.expr) -> bool:
    """`x.shape`, `x.size()`: a tensor's sizes, guarded as its shape already."""
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"


def refuse_mutated(call: ast.Call, analysis: FunctionAnalysis) -> None:
    mutated = mutated_later(call, analysis)
    if mutated:
        raise Refused(mutated_reason(mutated))


def mutated_reason(name: str) -> str:
    return f"`{name}` is changed in place later, so a deferred message would show its later value"


def mutated_later(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """A tensor the call formats, or one sharing its memory, that the function changes in place
    after the call (or in a loop around it): a deferred message would show the later value."""
    if analysis.function is None:
        return None
    passed = set().union(*(names_in(a) for a in [*call.args, *(k.value for k in call.keywords)]))
    return written_after(analysis.function.node, call, passed, analysis)
