from __future__ import annotations

import ast
import weakref

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..regions import bound_names
from ..semantics import walk
from ..torch_api import SIZE_FUNCTIONS, SIZE_METHODS, breaks_on
from .base import Rule, RuleDocs


class TensorAsSize(Rule):
    """A tensor passed where an API takes a size or a bound."""

    docs = RuleDocs(
        what=(
            "flags a tensor passed where an API takes a size or a bound, which must be a "
            "Python int: the sizes of `torch.zeros/ones/empty/full/rand/randn`, the bounds of `torch.arange`, "
            "`linspace`/`logspace` steps, `torch.eye`, `F.interpolate(size=)`, `F.pad(pad=)`, the tensor "
            "methods `repeat`, `expand`, `view`, `reshape`, `tile`, `narrow`, `unflatten`, `new_zeros`..., "
            "the builtin `range`, and slice bounds (`x[:n]`); NumPy factories (`np.zeros`, `np.arange`...) "
            "and NumPy values as sizes too, since Dynamo traces NumPy as tensors."
        ),
        why=(
            "Dynamo must know the value to trace a shape, so it reads the tensor "
            'with an implicit `.item()` ("Data dependent operator", gb0033; `range(t)` fails as "Failed to '
            'trace builtin operator", gb0059; a slice bound as "Unsupported Tensor.item() call", gb0124), '
            "measured on torch 2.13. torch 2.9 and 2.10 trace a tensor slice bound (`torch-version`, `BREAKS_SINCE`)."
        ),
        example=(
            "target_length = cache_position[-1] + 1          # a tensor\n"
            "causal_mask = torch.full((sequence_length, target_length), min_dtype)"
        ),
        action="Pass a Python int where a size is expected, e.g. one read from `x.shape`.",
        fix=(
            "no rewrite keeps the shape without the value. Take the size from a shape "
            "(`x.shape[1]`, a Python int under Dynamo), pass it in as an int, or compute with a mask of a "
            "static size instead. Not flagged: a tensor the compiled function receives, and a constant of "
            "Python numbers (`torch.tensor(n)`, `torch.div(a, b)` of ints): Dynamo knows their values and "
            "traces the size; a slice bound breaks with any tensor."
        ),
    )

    code = "GM309"
    name = "tensor-as-size"
    message = (
        "A tensor used as a size is read as a value (an implicit `.item()`); pass a Python int, e.g. from `.shape`"
    )
    severity = Severity.INFORMATION
    reason = "Data dependent operator"
    reason_id = "gb0033"
    also_reported_as = ("gb0059", "gb0124")
    fixable = False
    node_types = (ast.Call, ast.Subscript)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                return None  # a slice of anything (a tensor, a list) needs its bounds as ints
            if not breaks_on("tensor slice bound", analysis.module.torch_version):
                return None  # torch 2.9 traces it (an unbacked int)
            slices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            bounds = [
                b for s in slices if isinstance(s, ast.Slice) for b in (s.lower, s.upper, s.step) if b is not None
            ]
            return node if any(_traced_as_tensor(b, analysis) for b in bounds) else None  # any tensor: `.item()` on it
        assert isinstance(node, ast.Call)
        signature = self._sizes_of(node, analysis)
        if signature is None:
            return None
        positions, keywords = signature
        arguments = [a for i, a in enumerate(node.args) if positions == "*" or i in positions]
        arguments += [k.value for k in node.keywords if k.arg in keywords]
        sizes = [
            s
            for a in arguments
            for s in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])
            if not isinstance(s, ast.Starred) and _computed_tensor(s, analysis)
        ]
        if not sizes:
            return None
        # Dynamo breaks at the first use of a computed size; the frame it resumes in receives the
        # value as an input, which it knows (measured: zamba:1156 breaks, the same size at :1159 not).
        seen = _USED_SIZES.setdefault(analysis, set())
        names = {s.id for s in sizes if isinstance(s, ast.Name)}
        if names and len(names) == len(sizes) and names <= seen:
            return None
        seen |= names
        return node

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        if isinstance(reported, ast.Subscript):
            slices = reported.slice.elts if isinstance(reported.slice, ast.Tuple) else [reported.slice]
            bounds = [
                b for s in slices if isinstance(s, ast.Slice) for b in (s.lower, s.upper, s.step) if b is not None
            ]
            if not any(analysis.kind(b).is_tensor for b in bounds):
                return "gb0033"  # NumPy bounds only: read as data (measured)
            return "gb0124"  # a slice bound: `Tensor.item()` on it
        if isinstance(reported, ast.Call) and isinstance(reported.func, ast.Name):
            return "gb0059"  # `range(t)`
        return self.reason_id

    @staticmethod
    def _sizes_of(call: ast.Call, analysis: FunctionAnalysis) -> tuple[str | tuple[int, ...], tuple[str, ...]] | None:
        func = call.func
        qualname = analysis.qualified_name(func)
        if qualname is not None:
            return SIZE_FUNCTIONS.get(qualname)
        if isinstance(func, ast.Name) and func.id == "range" and analysis.is_builtin("range"):
            return "*", ()
        if isinstance(func, ast.Attribute) and func.attr in SIZE_METHODS and analysis.kind(func.value).is_tensor:
            return SIZE_METHODS[func.attr]
        return None


_USED_SIZES: weakref.WeakKeyDictionary[FunctionAnalysis, set[str]] = weakref.WeakKeyDictionary()  # per walk
_OPERATIONS = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)  # what makes a value in the graph
_MAX_DEPTH = 8


def _traced_as_tensor(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A tensor, or a NumPy value: Dynamo traces NumPy in compiled code as tensors (torch._numpy), so
    `np.zeros((n, np.sum(counts)))` reads its size like `torch.zeros` would (gb0033, measured on
    torch 2.13 in BigBird's random attention plan)."""
    kind = analysis.kind(expr)
    return kind.is_tensor or kind is Kind.NUMPY


def _computed_tensor(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A tensor the compiled code computes. Dynamo knows the value of a tensor the frame receives
    (`torch.arange(n)` with `n` an argument traces, specialised on it; `torch.arange(n + 1)`
    breaks, measured on torch 2.13), so parameters, attributes and their aliases are left out."""
    if not _traced_as_tensor(expr, analysis):
        return False
    if isinstance(expr, _OPERATIONS):
        return _in_graph(expr, analysis, 0)
    function = analysis.function
    if not isinstance(expr, ast.Name) or function is None:
        return False
    if expr.id in function.parameter_names:
        # A NumPy number the frame receives is data all the same (BigBird's `np.arange(to_start_block_id,
        # to_end_block_id)` breaks, measured): Dynamo wraps it as a tensor input, not a constant.
        return analysis.kind(expr) is Kind.NUMPY
    values = analysis.module.regions.assigned_values(function).get(expr.id, [])
    iterables = _loop_iterables(analysis, expr.id)
    if iterables and len(iterables) == len(values):  # only a loop target: an element of what it iterates
        return all(_in_graph(iterable, analysis, 0) for iterable in iterables)
    return bool(values) and all(isinstance(v, _OPERATIONS) and _in_graph(v, analysis, 0) for v in values)


def _loop_iterables(analysis: FunctionAnalysis, name: str) -> list[ast.expr]:
    """What the `for` loops that bind `name` iterate (`for h, w in image_sizes`: a row of a tensor,
    which Dynamo computes in the graph, so `torch.arange(h)` breaks: measured on torch 2.13)."""
    return [
        node.iter
        for node in analysis.module.regions.bindings(analysis.function)  # type: ignore[arg-type]
        if isinstance(node, (ast.For, ast.AsyncFor)) and name in bound_names(node.target)
    ]


def _in_graph(expr: ast.expr, analysis: FunctionAnalysis, depth: int) -> bool:
    """A value Dynamo holds as a tensor: an input, or an operation on one. A `torch` function of
    Python numbers only (`torch.div(seq_len, w, rounding_mode="trunc")` on sizes, `torch.tensor(n)`)
    gives a constant whose value Dynamo knows, so sizes built from it trace (measured on torch
    2.13; a slice bound breaks even then, see `check`)."""
    if depth > _MAX_DEPTH or not _traced_as_tensor(expr, analysis):
        return False
    if isinstance(expr, ast.Name):
        function = analysis.function
        if function is None or expr.id in function.parameter_names:
            return function is not None
        values = analysis.module.regions.assigned_values(function).get(expr.id, [])
        return bool(values) and all(_in_graph(v, analysis, depth + 1) for v in values)
    if isinstance(expr, ast.Call):
        qualname = analysis.qualified_name(expr.func)
        callee = (
            analysis.module.regions.resolve_call(expr, analysis.function)
            if analysis.function and qualname is None
            else None
        )
        if callee is not None and callee.owner is None:  # a helper of this file: what it returns
            inner = FunctionAnalysis(analysis.module, callee)
            inner.env = analysis.module.final_env(callee)  # its kinds at its end, walked once per module
            returned = [n.value for n in walk(callee.node) if isinstance(n, ast.Return) and n.value is not None]
            return any(_in_graph(value, inner, depth + 1) for value in returned)
        if qualname is None or not qualname.startswith(
            "torch."
        ):  # NumPy: a tensor in the graph even of constants (measured)
            return True  # a tensor's method, a submodule
        arguments = [*expr.args, *(k.value for k in expr.keywords)]
        elements = [e for a in arguments for e in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])]
        return any(_in_graph(e, analysis, depth + 1) for e in elements if not isinstance(e, ast.Starred))
    if isinstance(expr, ast.BinOp):
        return _in_graph(expr.left, analysis, depth + 1) or _in_graph(expr.right, analysis, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _in_graph(expr.operand, analysis, depth + 1)
    return True
