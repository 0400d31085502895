"""Where gradients flow once every path runs: the facts a predicated rewrite must keep.

`torch.where(c, a, b)` sends a zero gradient to the side it does not select. Where the original
took one path, what only the other path read got no gradient at all: a parameter then had `.grad`
None (AdamW's weight decay and SGD's momentum skip it), and a value computed before the `if` was
never differentiated (its backward may give NaN on a zero gradient: `x.std()` of one element). And
`torch.where` always makes a new tensor, where a path that passed the caller's own tensor through
gave that object back. An `if` statement and a conditional expression share these checks.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ...analysis.purity import (
    called_submodule,
    computed_harmlessly,
    differentiable_reads,
    gradient_free,
    trained_state,
)
from ...inference import FunctionAnalysis
from ...kinds import Env, Kind
from ...semantics import FunctionInfo, ModuleIndex, once_per_module, walk
from ..base import unreached_gradients, zero_gradients

SUBMODULE_HOOKS = (
    "`{}` now runs on every call, where the original ran it only with its branch: forward hooks registered on it "
    "fire, and a parametrization on it (spectral norm's power iteration) updates its buffers in training"
)


def one_path_gradients(
    function: FunctionInfo,
    analysis: FunctionAnalysis,
    before: Env,
    paths: Sequence[Sequence[ast.AST]],
    every_path: bool,
    inside: set[int],
) -> list[str]:
    """The hazards of tensors only some of `paths` read (each path: its statements or its
    expression; `every_path`: one of them always runs). A tensor also read on every path, or
    outside the rewritten code (`inside`: the ids of its nodes), gets its gradient anyway, and so
    does one computed from such tensors by total operations (`computed_harmlessly`)."""
    node = function.node
    parameters = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    candidates = [a.arg for a in parameters] + [n for n in before if n not in function.parameter_names]
    reached: set[str] = set()
    one_path: list[str] = []
    # a read after the rewritten code takes its gradient to the result anyway; one before it may only
    # define a value that some paths read (`h = x.float() * 1`, read on one path: review 13)
    last = max((getattr(n, "end_lineno", 0) or 0 for n in walk(node) if id(n) in inside), default=0)
    annotated = {a.arg for a in parameters if _python_annotation(a.annotation)}
    for name in dict.fromkeys(candidates):
        is_parameter = name in function.parameter_names
        python = before.get(name) in (Kind.PYTHON, Kind.NONE, Kind.BOOL_TENSOR)
        if name == function.self_name or (python and (not is_parameter or name in annotated)):
            continue  # a parameter whose default is a number may still be given a tensor (review 8)
        if not is_parameter and not (before.get(name, Kind.UNKNOWN).is_tensor or analysis.has_tensor_evidence(name)):
            continue
        reading = [path for path in paths if any(differentiable_reads(part, name) for part in path)]
        if (every_path and len(reading) == len(paths)) or any(
            id(n) not in inside and getattr(n, "lineno", 0) > last for n in differentiable_reads(node, name)
        ):
            reached.add(name)
        elif reading:
            one_path.append(name)
    bound = {n.id for n in walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)} | {
        a.arg for a in parameters
    }
    for name in dict.fromkeys(n.id for path in paths for part in path for n in walk(part) if isinstance(n, ast.Name)):
        if name in bound or name in one_path or name in reached or analysis.is_builtin(name):
            continue
        if analysis.qualified_name(ast.Name(id=name, ctx=ast.Load())) is not None or name in _module_names(analysis):
            continue  # a module, a function, a class, a module-level name (judged apart): not a closure's tensor
        reading = [path for path in paths if any(differentiable_reads(part, name) for part in path)]
        every = every_path and len(reading) == len(paths)
        if reading and not every and analysis.kind(ast.Name(id=name)) is not Kind.PYTHON:
            one_path.append(name)  # a cell of an enclosing function (review 14)
    hazards: list[str] = []
    for name in one_path:
        if name not in bound:
            hazards.append(zero_gradients(f"`{name}` (a tensor of an enclosing function)"))
        elif name in function.parameter_names:
            hazards.append(zero_gradients(f"`{name}` (where the caller passes a trained parameter)"))
        elif not gradient_free(name, analysis) and not computed_harmlessly(name, analysis, reached):
            hazards.append(unreached_gradients(name))
    return hazards


def _module_names(analysis: FunctionAnalysis) -> frozenset[str]:
    """The names the module's own top level binds (functions, classes, imports, globals)."""
    return frozenset(analysis.module.module_env) | _top_level_names(analysis.module.index)


@once_per_module
def _top_level_names(index: ModuleIndex) -> frozenset[str]:
    names: set[str] = set()
    for stmt in index.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in stmt.names)
        else:
            names.update(n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return frozenset(names)


def _python_annotation(annotation: ast.expr | None) -> bool:
    """`int`, `float`, `bool`, `str` (alone or optional): a caller passes no tensor there."""
    if annotation is None:
        return False
    names = {n.id for n in walk(annotation) if isinstance(n, ast.Name)} | {
        n.value for n in walk(annotation) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    return bool(names) and names <= {"int", "float", "bool", "str", "None", "Optional"}


def state_read(expr: ast.AST, analysis: FunctionAnalysis, seen: set[int] | None = None) -> list[str]:
    """The hazards of module state `expr` runs where its path did not: trained parameters (a zero
    gradient instead of none) and submodules it calls (their hooks and parametrizations), read
    directly or by a method of the same module it calls (`self.scaled(x)` reading `self.gamma`)."""
    seen = set() if seen is None else seen
    hazards: list[str] = []
    for node in walk(expr):
        found = []
        state = trained_state(node, analysis)
        if state is not None:
            found.append(zero_gradients(f"the parameters of `{state}`"))
        submodule = called_submodule(node, analysis)
        if submodule is not None:
            found.append(SUBMODULE_HOOKS.format(submodule))
        method = _own_method(node, analysis)
        if method is not None and id(method.node) not in seen:
            seen.add(id(method.node))
            inner = FunctionAnalysis(analysis.module, method)
            inner.run()
            for stmt in method.node.body:
                found.extend(state_read(stmt, inner, seen))
        hazards.extend(h for h in found if h not in hazards)
    return hazards


def _own_method(node: ast.AST, analysis: FunctionAnalysis) -> FunctionInfo | None:
    """The method of this module's class (`self.scaled(x)`) or the function of this file
    (`scaled(x)`, reading a module-level parameter) that `node` calls, or None."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and analysis.is_self(node.func.value):
        owner = analysis.owner
        return None if owner is None else owner.find_method(node.func.attr)
    if analysis.function is None:
        return None
    return analysis.module.regions.resolve_call(node, analysis.function)


# What gives a tensor strides of another order than elementwise arithmetic on its input would
# (a transpose, an expansion, a copy made contiguous): `torch.where` lays its result out by all of
# its inputs, so a selected value may come back with other strides than its path gave it.
_LAYOUT_METHODS = frozenset(
    "t T mT H mH transpose permute movedim moveaxis swapaxes swapdims expand expand_as broadcast_to as_strided "
    "contiguous unfold diagonal".split()
)


def layout_hazard(label: str, values: Sequence[ast.expr | None]) -> str | None:
    """A path whose value's strides a layout operation sets (`x.t()`, `x.transpose(0, 1) * 2`): after
    the rewrite the value may be laid out otherwise, and a later `.view(...)`, `.stride()` or
    `.is_contiguous()` tells (issue 67, review 5: `w.view(-1)` raised after a selection between
    `x.t()` and a contiguous copy)."""
    for value in values:
        if value is not None and any(
            isinstance(node, ast.Attribute) and node.attr in _LAYOUT_METHODS for node in walk(value)
        ):  # anywhere in it: elementwise arithmetic keeps a transposed operand's strides
            return (
                f"{label} may come back with other strides than its path gave it (`{ast.unparse(value)}` sets them; "
                "`torch.where` lays its result out by all of its inputs): a later `.view(...)` may raise where it "
                "did not, or `.stride()` and `.is_contiguous()` answer otherwise"
            )
    return None


# What returns a piece of a tensor, a view that is not dense (`chunk`, `narrow`, a slice): torch.where
# makes a dense result, so a selection between such a piece and another value has other strides.
_PIECE_METHODS = frozenset("chunk split unbind tensor_split narrow select diagonal".split())


def piece_hazard(label: str, values: Sequence[ast.expr | None]) -> str | None:
    """A path's value that is itself a piece of a tensor (`hidden` of `hidden, gate = h.chunk(2)`,
    `x[:, :k]`): at run time the helper sees other strides and keeps the `if`, which breaks the
    graph as before, in a frame of its own (issue 67: a safe fix then added a graph and a recompile)."""
    for value in values:
        piece = (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _PIECE_METHODS
        ) or (
            isinstance(value, ast.Subscript)
            and any(
                isinstance(part, ast.Slice)
                for part in (value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice])
            )
        )
        if piece:
            assert value is not None
            return (
                f"{label} may be a piece of a tensor (`{ast.unparse(value)}`), whose strides the selection does not "
                "keep: where they differ the rewrite keeps the `if`, which breaks the graph as before, in a helper frame "
                "of its own (a graph more, and a recompile)"
            )
    return None
