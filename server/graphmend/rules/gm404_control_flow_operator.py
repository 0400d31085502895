from __future__ import annotations

import ast

from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import select_for_cond
from ..inference import FunctionAnalysis
from .base import Rule, RuleDocs

CONTROL_FLOW_OPERATORS = {
    "torch.cond": "torch.cond",
    "torch._higher_order_ops.cond": "torch.cond",
    "torch._higher_order_ops.cond.cond": "torch.cond",
    "torch.while_loop": "torch.while_loop",
    "torch._higher_order_ops.while_loop": "torch.while_loop",
    "torch._higher_order_ops.while_loop.while_loop": "torch.while_loop",
}


class ControlFlowOperator(Rule):
    """`torch.cond`/`torch.while_loop` in code compiled for CUDA graphs."""

    docs = RuleDocs(
        what="flags `torch.cond` and `torch.while_loop` in code compiled for CUDA graphs.",
        why=(
            "the lowering of both operators marks a graph on "
            'the GPU as not recordable ("skipping cudagraphs due to control flow operator: torch.cond", '
            "`cond` and `while_loop` in `torch/_inductor/lowering.py`; `while_loop` only without "
            "`torch._inductor.config.graph_partition`). The operator removes a graph break but the whole "
            "graph then runs kernel by kernel, which for small models costs more than the break did."
        ),
        why_title="Why it keeps the graph out of CUDA graphs",
        example=(
            '@torch.compile(mode="reduce-overhead")\n'
            "def layer(x, keep):\n"
            "    return torch.cond(keep, lambda x: block(x), lambda x: x.clone(), (x,))"
        ),
        action="Select with `torch.where` where both branches are cheap; otherwise leave this graph out of CUDA graphs.",
        fix=(
            "`torch.cond(p, lambda x: f(x), lambda x: g(x), (x,))` becomes "
            "`torch.where(p, (lambda x: f(x))(x), (lambda x: g(x))(x))`: both branches run and the "
            "predicate selects, which inductor records. Offered for a tensor predicate and two lambdas that "
            "each return one tensor and call nothing impure (random draws, unknown functions); unsafe: the "
            "branch not taken now costs its compute, and where it produces inf or NaN the gradient through "
            "`torch.where` can turn NaN. graphmend's own GM101/GM102 fixes choose `torch.where` in code "
            "compiled for CUDA graphs. `torch.while_loop` has no such rewrite (the data decides how often "
            "the body runs); compile that code without CUDA graphs, or turn on "
            "`torch._inductor.config.graph_partition` so that inductor records the rest of the graph."
        ),
    )

    code = "GM404"
    name = "control-flow-operator"
    message = (
        "A control-flow operator keeps this graph out of CUDA graphs: select with `torch.where` if both sides are cheap"
    )
    reason = "skipping cudagraphs due to control flow operator"
    reason_id = None
    cuda_graphs = True
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if analysis.qualified_name(node.func) in CONTROL_FLOW_OPERATORS else None

    def message_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        operator = CONTROL_FLOW_OPERATORS[analysis.qualified_name(reported.func) or "torch.cond"]
        return self.message.replace("A control-flow operator", f"`{operator}`")

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.Call)
        if CONTROL_FLOW_OPERATORS[analysis.qualified_name(node.func) or ""] != "torch.cond":
            return Refusal("how often `torch.while_loop` runs its body is decided by the data: no select replaces it")
        return select_for_cond(node, analysis, ctx)
