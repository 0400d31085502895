"""Random draws a fix moves from eager code into a compiled graph (issue 42, class 6).

A break inside a loop makes Dynamo give up on the whole frame: it runs eagerly, its dropout masks
drawn from torch's generator. Once a fix removes the break, the frame compiles; under inductor its
random ops then draw from inductor's own generator, so for the same seed the masks, the outputs
and the gradients differ (they agree again with `torch._inductor.config.fallback_random = True`).
The values are as random as before, but not the same: a fix that does this says so.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from ..analysis.aliases import loop_nodes
from ..analysis.purity import draws_random
from ..diagnostics import Applicability, Fix
from ..inference import FunctionAnalysis
from ..semantics import walk


def random_moved_into_graph(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """The hazard when the break at `node` sits in a loop of a function that draws random numbers
    (the frame ran eagerly and will compile), else None."""
    function = analysis.function
    if function is None or not loop_nodes(function.node, node):
        return None
    for call in walk(function.node):
        if isinstance(call, ast.Call) and draws_random(call, analysis):
            drawn = ast.unparse(call.func)
            return (
                f"the break is in a loop, so Dynamo ran `{function.node.name}` eagerly; fixed, it compiles, and under "
                f"inductor its random draws (`{drawn}`) come from inductor's generator: for the same seed the values "
                "and gradients differ (unless `torch._inductor.config.fallback_random = True`)"
            )
    return None


def with_hazard(fix: Fix, hazard: str) -> Fix:
    """`fix`, unsafe with `hazard` added."""
    if hazard in fix.hazards:
        return fix
    return replace(fix, applicability=Applicability.UNSAFE, hazards=(*fix.hazards, hazard))
