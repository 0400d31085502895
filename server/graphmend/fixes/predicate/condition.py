"""The chain's conditions: each tensor condition named once for `torch.where`, each arm's predicate,
and the condition's Python part, which stays a Python `if` around the rewrite."""

from __future__ import annotations

import ast
from functools import partial

from ...analysis import conditions
from ...analysis.hazards import hazards
from ...analysis.purity import caveats, dotted, evaluated_always, impurity, names_in
from ...analysis.shapes import is_scalar_condition
from ...inference import FunctionAnalysis
from ...inference.parameters import parameters_with_defaults
from ...kinds import Kind
from ...semantics import walk
from ..base import Refused
from .arms import Arm
from .signatures import floating_before, unproven_finfo
from .site import Site


def name_conditions(site: Site, arms: list[Arm], lines: list[str]) -> list[str]:
    """The name of each arm's condition (not the else path's); `lines` gets their assignments."""
    analysis = site.analysis
    names: list[str] = []
    for arm in arms:
        if arm.test is None:
            continue
        reason = impurity(arm.test, analysis, set(), condition=True)
        if reason is not None:
            raise Refused(reason.replace("a branch", "the condition"))
        typed = [name for name in analysis.caller_typed if name in names_in(arm.test)]
        if typed:
            raise Refused(
                f"`{typed[0]}` is a tensor only for some callers (compiled code of another file passes one; "
                f"its annotation says `{analysis.caller_typed[typed[0]] or 'nothing'}`): "
                "a rewrite must keep working for a Python value"
            )
        claims = conditions.annotation_claims(arm.test, analysis)
        if claims:
            raise Refused(
                f"{next(iter(claims.values()))}, and nothing here uses it as one: a caller may pass a Python value, "
                "on which `torch.where` raises"
            )
        always = frozenset(evaluated_always(arm.test)) if arm is arms[0] else frozenset()  # later ones were lazy
        for assumption in caveats([arm.test], analysis, always):
            site.unsafe(assumption)
        if arm is not arms[0]:
            _later_condition(site, arm.test)
        _lazy_operands(site, arm.test)
        if not is_scalar_condition(arm.test, analysis):
            site.unsafe("the condition may have more than one element")
        if isinstance(arm.test, ast.Name) and analysis.kind(arm.test) is Kind.BOOL_TENSOR:
            names.append(arm.test.id)
            continue
        text = conditions.tensor_logic(arm.test, analysis, site.ctx.segment, site.torch)
        if "\n" in text and not text.startswith("("):
            text = f"({text})"
        name = site.ctx.fresh_name("cond")
        lines.append(f"{name} = {text}")
        names.append(name)
    return names


def _skipped(site: Site, expr: ast.expr, where: str) -> None:
    """What code Python skipped on some calls (an `elif` condition, a later `and`/`or` operand) may
    do now that the rewrite evaluates it on every call, `where` saying when it was skipped: an
    operation torch does not compute for a dtype graphmend does not know (`x.mean()` of an integer
    tensor), and a parameter read nowhere that always runs before it (`y.sum()` with `y=None`;
    review 14). Shapes that may not combine are `hazards`' own (`x == y`)."""
    analysis = site.analysis
    for words in unproven_finfo([expr], analysis, partial(floating_before, site), frozenset()):
        site.unsafe(f"`{ast.unparse(expr)}` is now evaluated also {where}: {words}")
    function = analysis.function
    if function is None:
        return
    read_before = {
        n.id
        for stmt in function.node.body
        if stmt.lineno < site.node.lineno
        for n in walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    } | set(names_in(site.node.test) - names_in(expr) if isinstance(site.node.test, ast.BoolOp) else set())
    for name in sorted((names_in(expr) & function.parameter_names) - read_before - {"self", "cls"}):
        site.unsafe(  # its use here is no evidence of what it is where this was skipped
            f"`{ast.unparse(expr)}` reads `{name}`, which a caller passes and nothing before it uses: evaluated "
            f"also {where}, it raises for a value that is not a tensor there (None, a number)"
        )


def _later_condition(site: Site, test: ast.expr) -> None:
    """An `elif` condition, which the rewrite evaluates on every call, also where an earlier one
    held: an operation of it that raises there refuses the fix (`h.amax()` of an empty tensor the
    first condition let through), one that may raise or whose mean needs a floating input makes it
    unsafe (issue 67, review 7)."""
    for hazard in hazards(test, site.analysis):
        if hazard.raises is not None:
            raise Refused(f"an `elif` condition is evaluated on every call after the rewrite: {hazard.raises}")
        if hazard.may_raise is not None:
            site.unsafe(hazard.may_raise)
    for node in walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FLOATING_ONLY:
            site.unsafe(
                f"an `elif` condition calls `.{node.func.attr}()`, evaluated on every call after the rewrite, also "
                "where an earlier condition held: it raises for an integer or bool tensor, which that condition may "
                "have let through"
            )
    _skipped(site, test, "where an earlier condition held")


def _lazy_operands(site: Site, test: ast.expr) -> None:
    """`x.any() and mask.all()`: Python skipped each operand after the first where an earlier one
    decided; the rewrite's tensor logic evaluates them all. One that may raise, or reads a
    parameter whose default is None, now does so also where it was skipped (review 9)."""
    function = site.analysis.function
    none_defaults = (
        {
            a.arg
            for a, d in parameters_with_defaults(function.node.args)
            if isinstance(d, ast.Constant) and d.value is None
        }
        if function is not None
        else set()
    )
    for node in walk(test):
        if not isinstance(node, ast.BoolOp):
            continue
        earlier = ast.unparse(node.values[0])
        for operand in node.values[1:]:
            _skipped(site, operand, f"where `{earlier}` decided the condition")
            for hazard in hazards(operand, site.analysis):
                if hazard.raises is not None or hazard.named is not None:
                    site.unsafe(
                        f"`{ast.unparse(operand)}` is now evaluated also where `{earlier}` decided the condition: "
                        f"{hazard.raises or hazard.named}"
                    )
            for name in sorted(names_in(operand) & none_defaults):
                site.unsafe(
                    f"`{ast.unparse(operand)}` is now evaluated also where `{earlier}` decided the condition, and "
                    f"raises where `{name}` is None (its default)"
                )
            if not site.analysis.kind(operand).is_tensor and not _known_truth(operand, site.analysis):
                site.unsafe(  # review 12: `h.sum() > 0 or flag`, `flag` a NumPy array or an object's `__bool__`
                    f"`{ast.unparse(operand)}` is now made a bool also where `{earlier}` decided the condition: for a "
                    "value graphmend does not know to be a bool or a number (a NumPy array, an object whose "
                    "`__bool__` runs code), that raises or has an effect where Python skipped it"
                )


# Calls whose result is a bool, whatever they are given (that they may raise is judged apart).
_BOOL_CALLS = frozenset({"isinstance", "callable", "hasattr", "bool"})
_BOOL_METHODS = frozenset({"is_floating_point", "is_complex", "is_contiguous", "startswith", "endswith"})


def _known_truth(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """`expr` is a bool or a number already (its truth runs no code and raises nothing): a
    literal, an `is` test, a comparison of Python values, `not`/`and`/`or` of such, a bool builtin's
    result, `self.training`; not a parameter, whatever its default or annotation says (a caller may
    pass a NumPy array)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _known_truth(expr.operand, analysis)
    if isinstance(expr, ast.BoolOp):
        return all(_known_truth(value, analysis) for value in expr.values)
    if isinstance(expr, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops) or all(
            analysis.kind(part) is Kind.PYTHON for part in (expr.left, *expr.comparators)
        )
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name):
            return func.id in _BOOL_CALLS and analysis.is_builtin(func.id)
        return isinstance(func, ast.Attribute) and func.attr in _BOOL_METHODS
    if isinstance(expr, ast.Attribute):
        return expr.attr == "training" and analysis.is_self(expr.value)
    return False


# Reductions torch computes for floating (and complex) tensors only: an integer input raises.
_FLOATING_ONLY = frozenset("mean var std softmax log_softmax norm".split())


def arm_predicate(number: int, conditions_: list[str]) -> str:
    """True exactly when this arm of the chain runs: its condition and none before it."""
    parts = [f"~{c}" for c in conditions_[:number]]
    if number < len(conditions_):
        parts.append(conditions_[number])
    return " & ".join(parts)


def floating_names(operands: tuple[ast.expr, ...], analysis: FunctionAnalysis) -> set[str]:
    """Tensors the Python operands of a condition prove floating point when they hold."""
    return set().union(*(_proven_floating(e, analysis) for e in operands))


def _proven_floating(test: ast.expr, analysis: FunctionAnalysis) -> set[str]:
    """Tensors a true `test` proves floating point: `x.dtype == torch.float16`, `x.is_floating_point()`."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "dtype"
    ):
        base = dotted(test.left.value)
        right = test.comparators[0]
        candidates = (
            right.elts
            if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set))
            else [right]
        )
        if (
            base is not None
            and isinstance(test.ops[0], (ast.Eq, ast.Is, ast.In))
            and candidates
            and all((analysis.qualified_name(c) or "").removeprefix("torch.") in _FLOATING_DTYPES for c in candidates)
        ):
            return {base}
    if isinstance(test, ast.Call) and len(test.args) <= 1:
        func = test.func
        if isinstance(func, ast.Attribute) and func.attr == "is_floating_point" and not test.args:
            base = dotted(func.value)
            return {base} if base is not None else set()
        if analysis.qualified_name(func) == "torch.is_floating_point" and test.args:
            base = dotted(test.args[0])
            return {base} if base is not None else set()
    return set()


_FLOATING_DTYPES = frozenset("float16 half float32 float float64 double bfloat16".split())


def reordered_operand(operand: ast.expr) -> str:
    """The hazard of a Python operand the rewrite evaluates before the tensor test it followed."""
    return (
        f"`{ast.unparse(operand)}` now runs before the tensor test it followed: where that test was false Python "
        "skipped it, and it may raise there (None compared, a missing attribute, a tensor's truth)"
    )
