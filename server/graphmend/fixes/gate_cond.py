"""The cost-aware form of a loop gate: `torch.cond` runs the layer only where it is not skipped.

    for layer in self.layers:                      for layer in self.layers:
        if self.training:                              skip_layer = None
            p = torch.rand([])                         if self.training:
            if p < self.layerdrop:          →              p = torch.rand([])
                continue                                   skip_layer = p < self.layerdrop
        h = layer(h)[0]                                def run_layer(h):
                                                           h = layer(h)[0]
                                                           return h
                                                       h = run_layer(h) if skip_layer is None else torch.cond(
                                                           skip_layer, lambda h: h.clone(), run_layer, (h,))

Why it is chosen over the `torch.where` form where it applies: a gate skips a whole layer, and only
in training (LayerDrop). The `torch.where` form runs every skipped layer, forward and backward, so a
model trained with LayerDrop p does 1/(1-p) of the original's layer work (2x at p = 0.5: measured,
benchmarks/README.md "torch.cond against torch.where"); `torch.cond` traces both branches into one
graph but runs only the one taken, so the fixed model does the original's work without its graph
breaks. In eval the gate is None and the layer runs as a plain call, exactly as before.

It applies when the guarded statements are plain assignments whose only values still needed
afterwards are tensors the layer replaces (the hidden state): `torch.cond`'s branches must return
the same tensors, and a skipped layer has no value for anything else (its attention weights, a
cache). Elsewhere the gate keeps the `torch.where` form and its title says why.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis import liveness
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..kinds import Kind
from ..semantics import walk
from .base import FixContext
from .gate_recognition import STATE_KINDS, Gate, Region, delete_statement, inert, unwrapped_header
from .text import Unmovable, first_line, indent_of, reindented

CARRIED_KINDS_NOTE = (
    "`torch.cond` needs the layer's output to match what it replaces in shape and dtype (compilation fails otherwise)"
)
SYNC_NOTE = "on a GPU the skip flag is read on the host (one device sync per layer, as the original `if` does)"


@dataclass(frozen=True)
class CondForm:
    """The edits that replace the guarded statements (the gate's definition is written apart)."""

    edits: tuple[TextEdit, ...]
    notes: tuple[str, ...]


def cond_form(gate: Gate, analysis: FunctionAnalysis, ctx: FixContext) -> CondForm | str:
    """The `torch.cond` form of a recognised gate, or why it does not apply."""
    if len(gate.regions) != 1:
        return "the flag guards several blocks"
    region = gate.regions[0]
    if region.force is not None:
        return "the layer also runs under a Python condition"
    statements = [s for s in region.statements if not inert(s)]
    if not statements:
        return "nothing runs in the layer's place"
    assignments = _assignments(statements, analysis)
    if isinstance(assignments, str):
        return assignments
    if any(isinstance(n, ast.Name) and n.id == "super" for s in statements for n in walk(s)):
        return "the layer's block calls `super()`, which a nested function cannot"
    end = gate.end(region)
    function = gate.function
    for name in region.placeholder_names:
        if liveness.live_after(function, end, name):
            return f"`{name}` is read after the layer, and a skipped layer has no value for it"
    assigned = list(dict.fromkeys(n for s in assignments for t in s.targets for n in liveness.target_names(t)))
    carried = [n for n in assigned if liveness.live_after(function, end, n)]
    if not carried:
        return "the layer's block sets nothing that is read later"
    for name in carried:
        if analysis.env.get(name, Kind.UNKNOWN) not in STATE_KINDS:
            return f"`{name}` is not a tensor"
        if not gate.has_old_value(name, statements):
            return f"`{name}` has no value to keep when the layer is skipped"
    try:
        return CondForm(_edits(gate, region, carried, ctx), (CARRIED_KINDS_NOTE, SYNC_NOTE))
    except Unmovable as error:
        return f"the layer's block cannot be moved: {error}"


def _edits(gate: Gate, region: Region, carried: list[str], ctx: FixContext) -> tuple[TextEdit, ...]:
    unit = ctx.indent_unit
    header = region.header
    outer = header if header is not None and region.unwrap else region.statements[0]
    indent = indent_of(ctx.source.lines[outer.lineno - 1])
    run = ctx.fresh_name("run_layer")
    params = ", ".join(carried)
    returned = params if len(carried) == 1 else f"({params})"
    clones = ", ".join(f"{n}.clone()" for n in carried)
    kept = clones if len(carried) == 1 else f"({clones})"
    targets = params
    cond = f"{gate.torch}.cond({gate.flag}, lambda {params}: {kept}, {run}, ({params},))"
    call = f"{run}({params}) if {gate.flag} is None else {cond}" if gate.may_be_none else cond
    first = first_line(region.statements[0], ctx)
    last = region.statements[-1].end_lineno or region.statements[-1].lineno
    body = reindented(ctx.source.lines[first - 1 : last], region.statements, ctx, indent + unit)
    lines = [f"{indent}def {run}({params}):", *body, f"{indent}{unit}return {returned}", f"{indent}{targets} = {call}"]
    if header is None or not region.unwrap:
        edits = [TextEdit(ctx.line_range(first, last), "\n".join(lines))]
        if header is not None:  # `if flag: continue`: the rest now runs through the cond
            edits.append(delete_statement(ctx, header))
        return tuple(edits)
    return (unwrapped_header(ctx, gate, region, indent, lines),)


def _shown(stmt: ast.stmt) -> str:
    """A statement as one short line of code, for a reason."""
    text = ast.unparse(stmt).splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


def _only_names(target: ast.expr) -> bool:
    """A name or a (nested) tuple of names: no attribute, subscript or starred store."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_only_names(e) for e in target.elts)
    return isinstance(target, ast.Name)


def _assignments(statements: list[ast.stmt], analysis: FunctionAnalysis) -> list[ast.Assign] | str:
    """The assignments of the layer's block, which may choose among them with Python `if`s
    (`if self.gradient_checkpointing and self.training: ... else: ...`); or why the block is more."""
    found: list[ast.Assign] = []
    for stmt in statements:
        if inert(stmt):
            continue
        if isinstance(stmt, ast.Assign) and all(_only_names(t) for t in stmt.targets):
            found.append(stmt)
        elif isinstance(stmt, ast.If) and not analysis.is_data_dependent(stmt.test):
            inner = [_assignments(block, analysis) for block in (stmt.body, stmt.orelse)]
            for result in inner:
                if isinstance(result, str):
                    return result
                found.extend(result)
        else:
            return f"the layer's block does more than assign names (`{_shown(stmt)}`)"
    return found
