from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..semantics import FunctionInfo, walk
from .base import Rule, RuleDocs

_CHECKPOINT = frozenset({"torch.utils.checkpoint.checkpoint"})
# Methods that change a list, dict or set in place.
_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard"}
)


class CheckpointSideEffect(Rule):
    """A side effect on an outer Python object in a function run under activation checkpointing."""

    docs = RuleDocs(
        what=(
            "flags, in a function of the same file that compiled code runs through "
            "`torch.utils.checkpoint.checkpoint(fn, ...)`, a change of a Python object the function did not "
            "create: a list, dict or set of the module or an enclosing function changed in place "
            "(`stack.append(...)`, `cache.update(...)`), or a name declared `global` or `nonlocal` rebound."
        ),
        why=(
            "Dynamo traces a checkpointed function as one higher-order operator whose body must be free of "
            "side effects, since checkpointing runs it again in the backward pass: a change of outside state "
            'ends the graph there ("HOP: Unsafe side effect", gb0067).'
        ),
        example=(
            "seen = []\n\ndef block(x):\n    seen.append(x.shape[0])\n    return torch.relu(x) * 2\n\n"
            "@torch.compile\ndef forward(x):\n    return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)"
        ),
        action="Return the value from the checkpointed function and record it after the checkpoint call.",
        fix=(
            "no automatic fix: the recording would move out of the checkpointed function, and checkpointing "
            "runs that function twice (forward and recomputation), so how often it records would change."
        ),
    )

    code = "GM317"
    name = "checkpoint-side-effect"
    message = "Changing outside state in a checkpointed function breaks the graph; return the value and record it after the checkpoint"
    severity = Severity.INFORMATION
    reason = "HOP: Unsafe side effect"
    reason_id = "gb0067"
    fixable = False
    about_a_value = False  # the break comes from the call or statement, not from a tensor value
    node_types = (ast.Call,)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, ast.Call)
        if analysis.qualified_name(node.func) not in _CHECKPOINT or not node.args or analysis.function is None:
            return None
        target = node.args[0]
        if not isinstance(target, ast.Name):
            return None
        function = analysis.module.regions.resolution.resolve_function_name(target.id, analysis.function)
        return _first_outer_change(function) if function is not None else None


def _first_outer_change(function: FunctionInfo) -> ast.AST | None:
    """The first statement-level change of state the function did not create, in source order."""
    declared = {name for n in walk(function.node) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    local = function.local_names - declared
    found: list[ast.AST] = []
    for node in walk(function.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id not in local:
                found.append(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in declared for t in targets):
                found.append(node)
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)  # type: ignore[attr-defined]
