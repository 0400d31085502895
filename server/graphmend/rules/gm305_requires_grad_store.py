from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..kinds import Kind
from .base import Rule, RuleDocs


class RequiresGradStore(Rule):
    """A store to `t.requires_grad` in compiled code."""

    docs = RuleDocs(
        what=(
            "flags `t.requires_grad = ...` on a tensor (or a value of unknown kind: only "
            "tensors have a `requires_grad` to set) in compiled code."
        ),
        why=(
            "Dynamo cannot trace a change of `requires_grad` inside a graph (it can "
            'turn a non-leaf into a leaf, which AOTAutograd does not handle): "setattr() on '
            'Tensor.requires_grad" (gb0206), for inputs and intermediates alike (measured on torch 2.13).'
        ),
        example=(
            "hidden_states = input_values[:, None]\n"
            "if self._requires_grad and self.training:\n"
            "    hidden_states.requires_grad = True   # wav2vec2's feature encoder, for checkpointing"
        ),
        action="Set `requires_grad` before the compiled call.",
        fix=(
            "no rewrite inside the compiled code keeps the behaviour (`requires_grad_()` "
            "breaks too). Set `requires_grad` on the inputs before calling the compiled model, or keep the "
            "statement out of the compiled region."
        ),
    )

    code = "GM305"
    name = "requires-grad-store"
    message = "Changing `requires_grad` in compiled code breaks the graph; set it before the compiled call"
    severity = Severity.INFORMATION
    reason = "setattr() on Tensor.requires_grad"
    reason_id = "gb0206"
    fixable = False
    node_types = (ast.Assign,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Assign)
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                kind = analysis.kind(target.value)
                if kind.is_tensor or (kind is Kind.UNKNOWN and not analysis.is_self(target.value)):
                    return target
        return None
