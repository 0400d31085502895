"""Predicated control flow: a data-dependent `if` becomes both branches plus `torch.where`.

    if x.sum() > 10:            cond = x.sum() > 10
        z = a + b        →      z_if = a + b
    else:                       z_else = a * b
        z = a * b               z = torch.where(cond, z_if, z_else)

Each branch's statements are moved, renamed where they assign, with their comments (LibCST on the
statement's own lines only, so the rest of the file is untouched byte for byte). The Python part of
a condition stays a Python `if` around the rewrite (`if h.dtype == torch.float16 and t.any():`
keeps `if h.dtype == torch.float16:`); stores to `self` attributes and `register_buffer` calls are
merged like names (`self.n = torch.where(cond, n_if, self.n)`). The rewrite is offered only when
running every branch unconditionally is provably harmless; otherwise the diagnostic says why not.

The steps, one module each: `structure` isolates the `if` and its arms, `effects` checks what each
arm does while `arms` renames what it binds, `condition` names the conditions, `merge` selects
between the branches' values (`signatures` compares their shapes), and `render` writes the text;
`if_statement` runs them in order, and `ternary` rewrites a conditional expression.
"""

from __future__ import annotations

import ast

from ...diagnostics import Fix
from ...inference import FunctionAnalysis
from ..base import FixContext, Refusal

# LibCST is the rewrites' one dependency outside the standard library, and a compiled one: the
# server bundled in the VS Code extension runs on the user's Python, which may lack it. Then the
# findings stay, and these two fixes say what they need.
NEEDS_LIBCST = "this rewrite needs LibCST, which the Python running graphmend lacks (`pip install libcst`)"

try:
    from .if_statement import predicate_if
    from .ternary import predicate_ternary
except ImportError as missing:
    if missing.name is None or missing.name.split(".")[0] != "libcst":
        raise

    def predicate_if(node: ast.If, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
        return Refusal(NEEDS_LIBCST)

    def predicate_ternary(node: ast.IfExp, analysis: FunctionAnalysis, ctx: FixContext) -> Fix | Refusal:
        return Refusal(NEEDS_LIBCST)


__all__ = ["NEEDS_LIBCST", "predicate_if", "predicate_ternary"]
