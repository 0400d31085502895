from __future__ import annotations

import ast

from ..analysis.module_state import IN_PLACE_METHODS, rebinds_to_view
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import out_of_place
from ..inference import FunctionAnalysis
from ..kinds import TENSORISH
from ..semantics import walk
from .base import Rule, RuleDocs


class MutatedInput(Rule):
    """An in-place change of an input of the compiled function, in code compiled for CUDA graphs."""

    docs = RuleDocs(
        what=(
            "flags an in-place change of a tensor argument of the compiled function "
            "itself (`x.add_(1)`, `x += y`, `x[i] = v`, `x.copy_(y)`), in code compiled for CUDA graphs, "
            "also after `x = x.squeeze(-1)` (a view: the same memory). Changes to `self.` buffers and to "
            "tensors the function made are not flagged."
        ),
        why=(
            "a CUDA graph replays into fixed memory, so inductor "
            'records none for a graph that writes into memory its caller owns ("skipping cudagraphs due to '
            'mutated inputs (1 instances)", `check_for_mutation` in `torch/_inductor/cudagraph_utils.py`: '
            "only parameters, buffers and tensors an earlier CUDA graph made may be changed)."
        ),
        why_title="Why it keeps the graph out of CUDA graphs",
        example=('@torch.compile(mode="reduce-overhead")\ndef step(x, scale):\n    x.mul_(scale)\n    return x.sum()'),
        action="Change a new tensor instead: `x = x.clone()` before the first in-place change.",
        fix=(
            "change a new tensor instead: `x = x.mul(scale)` (or `x = x + y` for "
            "`x += y`) where every operand is a Python value, otherwise `x = x.clone()` just before the "
            "block's first change of `x` (a tensor operand may promote the out-of-place result where the "
            "in-place op casts back; a copy keeps every form exact). Unsafe: the caller no longer sees its tensor changed."
        ),
    )

    code = "GM403"
    name = "mutated-input"
    message = "Do not change an input in place: a graph that writes into its caller's tensor is kept out of CUDA graphs"
    reason = "skipping cudagraphs due to mutated inputs"
    reason_id = None
    cuda_graphs = True
    node_types = (ast.Expr, ast.AugAssign, ast.Assign)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        name = _changed_input(node, analysis)
        return node if name is not None else None

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        name = _changed_input(node, analysis)
        assert name is not None and isinstance(node, ast.stmt)
        return out_of_place(node, name, analysis, ctx, lambda stmt: _changed_input(stmt, analysis) == name)


def _changed_input(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """The argument of the compiled function that `node` changes in place, if any."""
    function, entry = analysis.function, analysis.entry
    if function is None or entry is None or analysis.runs_inlined:
        return None  # a helper's parameter may be any tensor of the caller's
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        func = node.value.func
        receiver = func.value if func.attr in IN_PLACE_METHODS else None
    elif isinstance(node, ast.AugAssign):
        receiver = node.target
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        receiver = node.targets[0].value
    else:
        return None
    while isinstance(receiver, ast.Subscript):  # `x[0].add_(1)`, `x[:, i] = v`: a view of the input
        receiver = receiver.value
    if not isinstance(receiver, ast.Name) or receiver.id not in _tensor_parameters(analysis):
        return None
    return receiver.id if not _rebound(function.node, receiver.id) else None


def _tensor_parameters(analysis: FunctionAnalysis) -> set[str]:
    """Parameters known to hold a tensor here: by their kind, or annotated as a tensor (an optional
    one too: `position_ids: torch.Tensor = None` changed in place is a tensor where that runs). An
    optional kind that only weak evidence gives (`d["pair"]` used as a tensor makes `d` look like
    one, and so does a dict of tensors) is not enough."""
    function = analysis.function
    assert function is not None
    args = function.node.args
    self_name = function.self_name
    found = set()
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        kind = analysis.name_kind(arg.arg)
        if arg.arg == self_name:
            continue
        annotated = arg.annotation is not None and analysis.annotation_kind(arg.annotation).present in TENSORISH
        if kind in TENSORISH or (annotated and kind.present in TENSORISH):
            found.add(arg.arg)
    return found


def _rebound(function: ast.AST, name: str) -> bool:
    """`name` is bound again in the function (`x = x.clone()`, a loop target): whether a change
    reaches the caller's tensor then depends on the path; only plain cases are reported. `x += y`
    is not a binding of a tensor: it changes it in place, and `x = x.squeeze(-1)` keeps its storage."""
    kept = {id(n.target) for n in walk(function) if isinstance(n, ast.AugAssign)}
    kept |= {id(n.targets[0]) for n in walk(function) if isinstance(n, ast.Assign) and rebinds_to_view(n, name)}
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and id(n) not in kept
        for n in walk(function)
    )
