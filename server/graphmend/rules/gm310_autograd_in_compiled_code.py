from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..kinds import Kind
from .base import Rule, RuleDocs

# gb pages, measured on torch 2.13.0 (tests/dynamo_corpus/pos_autograd_in_graph.py).
_FUNCTIONS = {"torch.nn.Parameter": "gb0264", "torch.nn.parameter.Parameter": "gb0264", "torch.autograd.grad": "gb9186"}
_METHODS = {"backward": "gb0123", "retain_grad": "gb0108", "requires_grad_": "gb8985"}
_INPUT_REQUIRES_GRAD = "gb0125"  # `requires_grad_()` on a tensor the frame receives
_FACTORY_REQUIRES_GRAD = "gb0225"  # `torch.zeros(..., requires_grad=True)`


class AutogradInCompiledCode(Rule):
    """A change of autograd's state in compiled code."""

    docs = RuleDocs(
        what=(
            "flags code that changes autograd's state inside compiled code: building an "
            "`nn.Parameter`, a tensor factory with `requires_grad=True`, `t.requires_grad_()`, "
            "`loss.backward()`, `torch.autograd.grad(...)`, `t.retain_grad()`."
        ),
        why=(
            "Dynamo traces the forward computation only; by default it does not "
            'trace autograd\'s own operations ("Unsupported Tensor.backward() call", "using '
            '`torch.autograd.grad` with `trace_autograd_ops=False`") and cannot create leaves or parameters in '
            'a graph ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo", "tensor creation '
            'function with requires_grad=True", "Unsupported Tensor.requires_grad_() call", "requires_grad_() '
            'intermediate leaked as output", "Tensor.retain_grad() with AOTDispatcher"); each measured on '
            "torch 2.13 with its gb page."
        ),
        example=(
            "def forward(self, input_ids):\n"
            "    if max_pos > self.weights.size(0):\n"
            "        self.weights = nn.Parameter(self.get_embedding(max_pos, ...))   # speech_to_text"
        ),
        action="Make parameters and change autograd's state outside the compiled region.",
        fix=(
            "no rewrite inside the compiled code keeps autograd's behaviour. Build "
            "parameters in `__init__` (or as buffers, for tables), set `requires_grad` before the compiled "
            "call, and compile the forward (or the loss), calling `backward()` outside it."
        ),
    )

    code = "GM310"
    name = "autograd-in-compiled-code"
    message = "Dynamo does not trace a change of autograd state; make it outside the compiled region"
    severity = Severity.INFORMATION
    reason = "Attempted to use `torch.nn.Parameter()` constructor with Dynamo"
    reason_id = "gb0264"
    also_reported_as = ("gb9186", "gb0123", "gb0108", "gb8985", _INPUT_REQUIRES_GRAD, _FACTORY_REQUIRES_GRAD)
    fixable = False
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        return node if _page(node, analysis) is not None else None

    def reason_id_for(self, reported: ast.AST, analysis: FunctionAnalysis) -> str:
        assert isinstance(reported, ast.Call)
        return _page(reported, analysis) or self.reason_id


def _page(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The gb page Dynamo gives this call, or None when it is not an autograd operation."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        if qualname in _FUNCTIONS:
            return _FUNCTIONS[qualname]
        requires_grad = next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
        if (
            qualname.startswith("torch.")
            and isinstance(requires_grad, ast.Constant)
            and requires_grad.value is True
            and analysis.torch_call_kind(qualname).is_tensor
        ):
            return _FACTORY_REQUIRES_GRAD
        return None
    if not isinstance(func, ast.Attribute) or func.attr not in _METHODS:
        return None
    receiver = func.value
    kind = analysis.kind(receiver)
    if not (kind.is_tensor or (kind is Kind.UNKNOWN and not _maybe_module(receiver, analysis))):
        return None
    function = analysis.function
    if (
        func.attr == "requires_grad_"
        and isinstance(receiver, ast.Name)
        and function
        and receiver.id in function.parameter_names
    ):
        return _INPUT_REQUIRES_GRAD
    return _METHODS[func.attr]


def _maybe_module(receiver: ast.expr, analysis: FunctionAnalysis) -> bool:
    """`self.layer.requires_grad_()`, `self.requires_grad_()`: modules have the method too."""
    return analysis.is_self(receiver) or isinstance(receiver, ast.Attribute)
