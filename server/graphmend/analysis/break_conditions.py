"""Under which configuration a break can happen: the Python-decided tests around it.

A break inside `if self.training:` happens only in training; `if h.dtype == torch.float16 and
torch.isinf(h).any():` breaks only in half precision. These conditions are shown with the finding
("breaks only when ..."), and the `assume-training` / `assume-dtypes` settings, which say how the
code is run, hide findings whose conditions are then false. A break that needs a switch the code leaves off
by default (gradient checkpointing, flash attention) is shown, at a lower severity
(`off_by_default`): it is not the break a plain `torch.compile(model)` meets.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..inference import FunctionAnalysis
from ..inference.compile_time import three_valued
from ..semantics import self_stores, walk
from ..settings import DTYPES, Settings
from .conditions import split

# transformers' `config._attn_implementation` values a model runs only when asked for (the default
# is "eager" or "sdpa"): `attn_implementation=` in `from_pretrained`, and their own packages.
OPT_IN_ATTENTION = frozenset({"flash_attention_2", "flash_attention_3", "flex_attention"})

GUARDS_SHOWN = 2  # enclosing `if` tests named, innermost first


@dataclass(frozen=True)
class Condition:
    """`test` must be `holds` (True, or False on an `else` side) for the break to happen."""

    test: ast.expr
    holds: bool

    @property
    def text(self) -> str:
        return _holds_text(self.test, self.holds)


def conditions_of(node: ast.AST, analysis: FunctionAnalysis) -> list[Condition]:
    """The Python-decided tests of the `if`s around `node` (innermost first) and the Python operands
    that lead its own `and` test (`h.dtype == torch.float16 and torch.isinf(h).any()`). Empty when
    the break happens on every call that reaches it."""
    found = [Condition(test, taken) for test, taken in reversed(analysis.guards[-GUARDS_SHOWN:])]
    test = node.test if isinstance(node, (ast.If, ast.IfExp, ast.While)) else None
    if test is not None:
        found += [Condition(operand, True) for operand in split(test, analysis).static]
    unique: dict[str, Condition] = {}
    for condition in found:
        unique.setdefault(condition.text, condition)
    return list(unique.values())


def off_by_default(conditions: list[Condition], analysis: FunctionAnalysis) -> str | None:
    """The switch, left off by the code's defaults, that a condition needs on (its text), if one
    does: a `self` flag that only `__init__` sets, to False or None (`self.gradient_checkpointing
    = False`, turned on from outside by `gradient_checkpointing_enable()`), or an opt-in attention
    implementation."""
    known: dict[int, bool | None] = {}  # per node: each test's default is worked out once

    def default(node: ast.expr) -> bool | None:
        if id(node) not in known:
            known[id(node)] = _default(node, analysis)
        return known[id(node)]

    for condition in conditions:
        if three_valued(condition.test, default) is (not condition.holds):
            switches = [n for n in walk(condition.test) if isinstance(n, ast.expr) and default(n) is not None]
            return ast.unparse(switches[0])
    return None


def _default(test: ast.expr, analysis: FunctionAnalysis) -> bool | None:
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "_attn_implementation"
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value in OPT_IN_ATTENTION
    ):
        return isinstance(test.ops[0], ast.NotEq)
    if isinstance(test, ast.Attribute) and analysis.is_self(test.value):
        return _initial_flag(test.attr, analysis)
    return None


def _initial_flag(attribute: str, analysis: FunctionAnalysis) -> bool | None:
    """False when `__init__` sets `self.<attribute>` only to False or None and no other method of
    the class binds it; else None (unknown)."""
    owner = analysis.owner
    if owner is None:
        return None
    values = analysis.module.init_values(owner).get(attribute, [])
    if not values or not all(isinstance(value, ast.Constant) and value.value in (False, None) for _, value in values):
        return None
    if any(binder.node.name != "__init__" for binder, _ in self_stores(owner, attribute)):
        return None
    return False


def ruled_out(conditions: list[Condition], settings: Settings) -> bool:
    """True when, the way the settings say the code runs, one of the conditions is false."""
    if settings.assume_training is None and not settings.assume_dtypes:
        return False
    return any(_value(c.test, settings) is (not c.holds) for c in conditions)


def _value(test: ast.expr, settings: Settings) -> bool | None:
    """The test's truth under the settings' assumptions; None when they do not decide it."""
    return three_valued(test, lambda leaf: _assumed(leaf, settings))


def _assumed(test: ast.expr, settings: Settings) -> bool | None:
    """`self.training` and a dtype comparison, as the settings say the code runs."""
    if (
        isinstance(test, ast.Attribute)
        and test.attr == "training"
        and isinstance(test.value, ast.Name)
        and test.value.id == "self"
    ):
        return settings.assume_training
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot))
    ):
        return _dtype_test(test, settings)
    return None


def _dtype_test(test: ast.Compare, settings: Settings) -> bool | None:
    """`x.dtype == torch.float16` (either side) is false when float16 is not among the assumed
    dtypes; `!=` is then true. Equal to an assumed dtype stays undecided (which tensor has which)."""
    if not settings.assume_dtypes:
        return None
    sides = [test.left, test.comparators[0]]
    names = [_dtype_name(side) for side in sides]
    has_dtype_attribute = any(isinstance(side, ast.Attribute) and side.attr == "dtype" for side in sides)
    dtype = next((n for n in names if n is not None), None)
    if dtype is None or not has_dtype_attribute or dtype in settings.assume_dtypes:
        return None
    return isinstance(test.ops[0], (ast.NotEq, ast.IsNot))


def _dtype_name(expr: ast.expr) -> str | None:
    """`torch.float16` → "float16" (aliases canonical)."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "torch":
        return DTYPES.get(expr.attr)
    return None


_INVERSE = {
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


def _holds_text(test: ast.expr, holds: bool) -> str:
    """The test as it holds on the side taken, simplified for reading: `x is None` on the else side
    reads `x is not None`, and `not (a and not b)` reads `not a or b`."""
    return ast.unparse(_simplified(test) if holds else _negated(test))


def _simplified(test: ast.expr) -> ast.expr:
    """`not` pushed inward (De Morgan, double negation, inverted comparisons)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _negated(test.operand)
    if isinstance(test, ast.BoolOp):
        return ast.BoolOp(test.op, [_simplified(v) for v in test.values])
    return test


def _negated(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _simplified(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _INVERSE:
        return ast.Compare(test.left, [_INVERSE[type(test.ops[0])]()], test.comparators)
    if isinstance(test, ast.BoolOp):
        flipped = ast.Or() if isinstance(test.op, ast.And) else ast.And()
        return ast.BoolOp(flipped, [_negated(v) for v in test.values])
    return ast.UnaryOp(ast.Not(), test)
