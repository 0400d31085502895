from __future__ import annotations

import ast

from ..diagnostics import Severity
from ..inference import FunctionAnalysis
from ..regions import CompiledRegions
from ..semantics import FunctionInfo, binding_scope
from .base import Rule, RuleDocs

_CHECKPOINT = frozenset({"torch.utils.checkpoint.checkpoint"})
_CONTAINER_FACTORIES = frozenset(f"collections.{name}" for name in ("deque", "defaultdict", "OrderedDict", "Counter"))
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
            "create: a list, dict or set that the module or an enclosing function binds, changed in place "
            "(`stack.append(...)`, `cache.update(...)`, `cache[k] = v`), or a name declared `global` or `nonlocal` "
            "rebound. Also through `functools.partial(fn, ...)`. A container passed in as an argument, or an "
            "attribute of `self`, is not seen."
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
        if isinstance(target, ast.Call) and analysis.qualified_name(target.func) == "functools.partial" and target.args:
            target = target.args[0]  # `checkpoint(functools.partial(block, scale=2.0), x)`
        if not isinstance(target, ast.Name):
            return None
        regions = analysis.module.regions
        function = regions.resolution.resolve_function_name(target.id, analysis.function)
        return _first_outer_change(function, regions) if function is not None else None


def _first_outer_change(function: FunctionInfo, regions: CompiledRegions) -> ast.AST | None:
    """The first change, in the function's own body, of a container it did not create (a list,
    dict or set bound by the module or an enclosing function: `stack.append(...)`,
    `cache[k] = v`) or of a name it declares `global` or `nonlocal`."""
    declared = function.declared_outer

    def outer_container(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Name) and _outer_container(expr.id, function, regions)

    found: list[ast.stmt | ast.expr] = [
        call
        for call in regions.facts.calls(function)
        if isinstance(call.func, ast.Attribute) and call.func.attr in _MUTATORS and outer_container(call.func.value)
    ]
    for binding in regions.facts.bindings(function):
        if isinstance(binding, (ast.Assign, ast.AugAssign)):
            targets = binding.targets if isinstance(binding, ast.Assign) else [binding.target]
            if any(
                (isinstance(t, ast.Name) and t.id in declared)
                or (isinstance(t, ast.Subscript) and outer_container(t.value))
                for t in targets
            ):
                found.append(binding)
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)


def _outer_container(name: str, function: FunctionInfo, regions: CompiledRegions) -> bool:
    """`name` is, in `function`, a list, dict or set that the module or an enclosing function binds."""
    if name in function.local_names:  # without the names it declares `global` or `nonlocal`
        return False
    values = regions.facts.assigned_values(binding_scope(name, function.parent)).get(name, [])
    return bool(values) and all(_is_container(value, regions) for value in values)


def _is_container(value: ast.expr, regions: CompiledRegions) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name) and func.id in ("list", "dict", "set"):
        return regions.index.is_builtin(func.id)
    return regions.index.qualified_name(func) in _CONTAINER_FACTORIES
