from __future__ import annotations

import ast

from ..analysis.module_state import init_value, stores_besides
from ..diagnostics import Fix
from ..fixes.base import FixContext, Refusal
from ..fixes.cudagraphs import register_buffer
from ..inference import FunctionAnalysis
from ..semantics import ClassInfo, FunctionInfo, walk
from .base import Rule, RuleDocs


class ChangingPythonNumber(Rule):
    """A Python int kept on the module and changed by compiled code."""

    docs = RuleDocs(
        what=(
            "flags compiled code that changes a Python int kept on the module "
            "(`self.step += 1`, where `__init__` sets `self.step = 0`)."
        ),
        why=(
            "Dynamo bakes an int attribute of a module into the graph and guards on its value, "
            "so the next call sees another value and compiles again; after "
            "`torch._dynamo.config.recompile_limit` (8) compilations it gives up and runs the function "
            'eagerly ("torch._dynamo hit config.recompile_limit"; measured on torch 2.13: 8 graphs for 12 '
            "calls, even when the number only counts). Under CUDA graphs every compilation also records a "
            "new graph. A float attribute is not flagged: Dynamo makes it symbolic after one recompilation "
            "(measured: 2 graphs for 12 calls)."
        ),
        why_title="Why it hurts",
        example=(
            "def __init__(self):\n"
            "    super().__init__()\n"
            "    self.step = 0\n"
            "\n"
            "def forward(self, x):\n"
            "    self.step += 1\n"
            "    return x * self.step"
        ),
        action='Keep the number in a 0-d tensor buffer changed in place: `self.register_buffer("step", torch.tensor(0), persistent=False)`.',
        fix=(
            "keep the number in a 0-d int64 tensor buffer changed in place: "
            '`self.register_buffer("step", torch.tensor(0), persistent=False)`; `self.step += 1` then '
            "updates the buffer and the graph reads it, one graph for every call (measured). Offered where "
            "every change adds, subtracts or multiplies an int literal, and every other read of `self.step` "
            "is arithmetic with a tensor in the compiled function (a 0-d integer tensor promotes no tensor: "
            "the result's dtype is the one a Python int gave); a read as a Python number (an `if`, a "
            "`range`, a format string, another method) would become a tensor and is refused. Unsafe: "
            "`.to()`/`.cuda()` move the counter, and `self.step` is a tensor for code outside the class."
        ),
    )

    code = "GM405"
    name = "changing-python-number"
    message = "Keep this counter in a tensor buffer: a changing Python int attribute recompiles the graph on every call"
    reason = "torch._dynamo hit config.recompile_limit (guard on a changing module attribute)"
    reason_id = None
    node_types = (ast.AugAssign,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.AugAssign)
        target = node.target
        if not isinstance(target, ast.Attribute) or not analysis.is_self(target.value):
            return None
        return node if _python_number(target.attr, analysis) is not None else None

    def fix(
        self, node: ast.AST, reported: ast.AST, analysis: FunctionAnalysis, ctx: FixContext
    ) -> Fix | Refusal | None:
        assert isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute)
        attribute = node.target.attr
        found = _python_number(attribute, analysis)
        assert found is not None
        cls, init, value = found
        refusal = _other_uses(cls, init, value, attribute, analysis)
        if refusal is not None:
            return Refusal(refusal)
        torch_name = ctx.torch_name
        if torch_name is None:
            return Refusal(ctx.no_torch_name)
        return register_buffer(
            init,
            value,
            attribute,
            ctx,
            f"Keep `{attribute}` in a 0-d tensor buffer changed in place",
            ("`.to()` moves it", "code outside the class sees a tensor"),
            f"{torch_name}.tensor({ctx.segment(value)})",
        )


def _int_literal(value: ast.expr) -> bool:
    number = value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)) else value
    return isinstance(number, ast.Constant) and isinstance(number.value, int) and not isinstance(number.value, bool)


def _python_number(attribute: str, analysis: FunctionAnalysis) -> tuple[ClassInfo, FunctionInfo, ast.expr] | None:
    """The class, `__init__` and value when `__init__` sets `self.<attribute>` to an int literal."""
    found = init_value(attribute, analysis)
    return found if found is not None and _int_literal(found[2]) else None


def _other_uses(
    cls: ClassInfo, init: FunctionInfo, value: ast.expr, attribute: str, analysis: FunctionAnalysis
) -> str | None:
    """Why a tensor in place of the number would change what the class does, or None."""
    if init.owner is not cls:
        return f"`self.{attribute}` is set in `{init.qualname}`, another class's `__init__`"
    changes = [
        n
        for method in cls.methods.values()
        for n in walk(method.node)
        if isinstance(n, ast.AugAssign)
        and isinstance(n.target, ast.Attribute)
        and n.target.attr == attribute
        and method.is_self(n.target.value)
    ]
    if any(not isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)) or not _int_literal(n.value) for n in changes):
        return f"`self.{attribute}` is changed by something other than `+=`/`-=`/`*=` an int literal, which an integer tensor may not hold"
    changed = {id(n.target) for n in changes}
    others = [node for node in stores_besides(cls, init, value, attribute) if id(node) not in changed]
    if others:
        return f"`self.{attribute}` is set again at line {others[0].lineno}, and a buffer takes only tensors"
    function = analysis.function
    for method in cls.methods.values():
        parents = {id(child): parent for parent in walk(method.node) for child in ast.iter_child_nodes(parent)}
        for node in walk(method.node):
            if not (
                isinstance(node, ast.Attribute)
                and node.attr == attribute
                and isinstance(node.ctx, ast.Load)
                and method.is_self(node.value)
            ):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.AugAssign) and parent.target is node:
                continue
            if function is None or method.node is not function.node or not _tensor_arithmetic(node, parent, analysis):
                return (
                    f"`self.{attribute}` is read as a Python number at line {node.lineno}, where a tensor "
                    "would behave differently"
                )
    return None


def _tensor_arithmetic(node: ast.expr, parent: ast.AST | None, analysis: FunctionAnalysis) -> bool:
    """`node` is an operand of arithmetic whose other operand is a tensor: the result is a tensor
    either way, of the same dtype (a 0-d tensor does not promote a tensor of its category)."""
    if not isinstance(parent, ast.BinOp):
        return False
    other = parent.right if parent.left is node else parent.left
    return analysis.kind(other).is_tensor
