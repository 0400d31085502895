"""Loop gates: a data-dependent skip of a layer inside a loop (LayerDrop) becomes "run the layer
always, keep its result only where it was not skipped".

    for layer in self.layers:                      for layer in self.layers:
        if self.training:                              skip = None
            p = torch.rand([])                         if self.training:
            if p < self.layerdrop:          →              p = torch.rand([])
                continue                                   skip = p < self.layerdrop
        h = layer(h)[0]                                h_new = layer(h)[0]
                                                       h = h_new if skip is None else torch.where(skip, h, h_new)

gate_recognition finds the gate (the shapes transformers writes it in) as data; gate_where writes
the `torch.where` form from it, and with the `layer-skip = "cond"` setting, where the guarded block
only replaces tensors, gate_cond writes the `torch.cond` form instead (the skipped layer does not
run); the `torch.where` form is the default, being the cheaper one at the LayerDrop rates models use
(measured, see WHERE_CHOICE). Both forms are unsafe (gate_where, gate_cond say why).

Dynamo abandons the whole frame on a break inside a loop (0 graphs), so this is where fixing pays.
"""

from __future__ import annotations

import ast

from ..analysis import conditions, liveness
from ..diagnostics import Applicability, Fix
from ..inference import FunctionAnalysis
from .base import FixContext, Refusal, Refused, may_be_scripted, zero_gradients
from .gate_cond import CondForm, cond_form
from .gate_recognition import Gate, recognise_gate
from .gate_values import BROADCAST_NOTE
from .gate_where import where_form

TITLE = "Run the layer always and keep its result only where it is not skipped (`torch.where`)"
COND_TITLE = "Run the layer only where it is not skipped (`torch.cond`, as `layer-skip` asks: a skipped layer's compute does not run)"
# Measured (benchmarks/gate_cost.py): in training, `torch.where` costs less than `torch.cond` up to a
# LayerDrop of about 0.3 (at 0.1: 1.06x against 1.25x of the original), `torch.cond` less above (at 0.5:
# 1.67x against 1.98x); in eval both run the plain layer.
WHERE_CHOICE = 'cheaper than `torch.cond` at LayerDrop up to about 0.3; `layer-skip = "cond"` for higher rates'


def loop_gate(stmt: ast.stmt, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal | None:
    """The fix for a gate at `stmt` (an `if`, or the assignment holding a flag ternary); None when
    `stmt` is not a loop gate, so that the plain predication applies."""
    function = analysis.function
    if function is None or ctx.torch_name is None:
        return None
    loops = liveness.enclosing_loops(function.node, stmt)
    if not loops:
        return None
    try:
        gate = recognise_gate(stmt, loops[0], analysis, ctx)
        if gate is None:
            return None
        return _fix(gate, analysis, ctx)
    except (Refused, conditions.ConditionError) as refusal:
        return Refusal(refusal.reason)


def _fix(gate: Gate, analysis: FunctionAnalysis, ctx: FixContext) -> Fix:
    """The form `layer-skip` asks for where it applies, else the `torch.where` form with why not."""
    selected = where_form(gate, analysis, ctx)  # its refusals and notes hold for the `torch.cond` form too
    layers = ", ".join(f"`{n}`" for n in selected.layer_calls)
    zeros = zero_gradients(f"the parameters of a skipped layer ({layers})") if selected.layer_calls else None
    choice = WHERE_CHOICE
    recorded = ctx.cuda_graph_scope(analysis.entry)
    if ctx.layer_skip == "cond" and recorded is not None:
        choice = f"not `torch.cond`: CUDA graphs are recorded here ({recorded}), and `torch.cond` would keep the graph out of them"
    elif ctx.layer_skip == "cond":
        skipped = cond_form(gate, analysis, ctx)
        if isinstance(skipped, CondForm):
            reasons = [*skipped.notes, *(n for n in selected.notes if n != BROADCAST_NOTE)]
            if zeros is not None:  # torch.cond's backward gives the untaken branch's parameters zeros too
                reasons.append(zeros)
            return Fix(COND_TITLE, Applicability.UNSAFE, (*gate.definition, *skipped.edits), tuple(reasons))
        choice = f"not `torch.cond`: {skipped}"
    reasons = []
    if zeros is not None:
        reasons.append(
            f"a skipped layer still runs ({layers}): it costs its compute, in training its random draws (dropout) "
            "shift later ones and its batch norms update their running statistics (`num_batches_tracked` counts "
            "every step; later eval outputs differ), and its forward hooks fire"
        )
        reasons.append(zeros)
    reasons.extend(selected.notes)
    if may_be_scripted(analysis):
        reasons.append("torch.jit.script no longer compiles the function (its skip flag is None or a tensor)")
    return Fix(f"{TITLE}, {choice}", Applicability.UNSAFE, (*gate.definition, *selected.edits), tuple(reasons))
