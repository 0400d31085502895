from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..torch_api import NON_TENSOR_TORCH_CALLS
from .base import Rule, RuleDocs


class NonTensorTorchCall(Rule):
    """A torch function Dynamo does not model whose result is not a tensor."""

    docs = RuleDocs(
        what=(
            "flags, in compiled code, calls of torch functions whose result is not a tensor "
            "and that Dynamo does not model (the table `NON_TENSOR_TORCH_CALLS`): `torch.backends.cudnn.flags(...)`."
        ),
        why=(
            "Dynamo runs a `torch.*` call it does not know as an op and expects a "
            'tensor back: "torch.* op returned non-Tensor" (gb0208), measured on torch 2.13.0. A context '
            'manager of that kind also sends the rest of the frame to eager ("Unsupported context manager", '
            "gb0142): wav2vec2 and HuBERT wrap their CTC loss in `with torch.backends.cudnn.flags(enabled=False):`."
        ),
        example=(
            "with torch.backends.cudnn.flags(enabled=False):\n"
            "    loss = nn.functional.ctc_loss(log_probs, labels, input_lengths, target_lengths)"
        ),
        action="Make the call outside the compiled region and pass its result in.",
        fix=(
            "no automatic fix. Set the flag outside the compiled region "
            "(`torch.backends.cudnn.enabled = False` around the call of the compiled model), or move the code "
            "that needs it out of the compiled function."
        ),
    )

    code = "GM312"
    name = "non-tensor-torch-call"
    message = "Dynamo does not model this torch call; make it outside the compiled region"
    severity = Severity.INFORMATION
    reason = "torch.* op returned non-Tensor"
    reason_id = "gb0208"
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if analysis.qualified_name(node.func) in NON_TENSOR_TORCH_CALLS else None
