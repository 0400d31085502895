from __future__ import annotations

import ast

from ..inference import FunctionAnalysis
from ..semantics import binding_scope
from ..torch_api import breaks_on, traced_on
from .base import Rule, RuleDocs


class OutsideContextManager(Rule):
    """A `with` on a context manager of this file made outside the compiled code."""

    docs = RuleDocs(
        what=(
            "flags, in compiled code, a `with` on an object of a class of this file that defines `__enter__`, "
            "when the object was made outside the compiled code: a module-level name, or a `self.` attribute "
            "another method made."
        ),
        why=(
            'Dynamo enters a context manager made while it traces, but not one made before ("Unsupported '
            'context manager", gb0142, measured on torch 2.13): it cannot resume there, so the whole frame '
            "runs eagerly and the functions it calls compile as frames of their own. torch 2.14 enters both; "
            "2.9 and 2.10 enter a module-level one (`torch-version`, measured on each release)."
        ),
        example=("TIMER = Timer()\n\n@torch.compile\ndef step(x):\n    with TIMER:\n        return model(x)"),
        action="Make the context manager inside the compiled function (`with Timer():`), or enter it around the call.",
        fix=(
            "no automatic fix: a fresh object per call loses what the shared one keeps between calls, and "
            "entering it around the call times or guards more than the block did."
        ),
    )

    code = "GM319"
    name = "outside-context-manager"
    message = (
        "Dynamo cannot enter a context manager made outside compiled code; make it inside, or enter it around the call"
    )
    reason = "Unsupported context manager"
    reason_id = "gb0142"
    fixable = False
    about_a_value = False  # the break comes from the statement, not from a tensor value
    node_types = (ast.With, ast.AsyncWith)

    def check(self, node: ast.AST, analysis: FunctionAnalysis, in_condition: bool) -> ast.AST | None:
        assert isinstance(node, (ast.With, ast.AsyncWith))
        if analysis.function is None or traced_on("context manager made outside", analysis.module.torch_version):
            return None
        return next((item.context_expr for item in node.items if _made_outside(item.context_expr, analysis)), None)


def _made_outside(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A module-level name (not a local or parameter of any enclosing function) made from a class of
    this file with `__enter__`, or `self.attr` made so by a method other than this one."""
    function = analysis.function
    assert function is not None
    regions = analysis.module.regions
    if isinstance(expr, ast.Name):
        if binding_scope(expr.id, function) is not None or not breaks_on(
            "module-level context manager", analysis.module.torch_version
        ):
            return False  # a local or parameter of this function or one around it
        cls = regions.instances.instance_class(expr, None)
    elif isinstance(expr, ast.Attribute) and function.owner is not None and function.is_self(expr.value):
        if any(
            isinstance(target, ast.Attribute) and target.attr == expr.attr and function.is_self(target.value)
            for node in regions.bindings(function)
            if isinstance(node, ast.Assign)
            for target in node.targets
        ):
            return False  # made by this call
        cls = regions.instances.instance_class(expr, function)
    else:
        return False
    return cls is not None and cls.find_method("__enter__") is not None
