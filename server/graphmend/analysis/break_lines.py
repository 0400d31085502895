"""Which line Dynamo names for a break in a test written over several lines.

CPython gives the jump after a comparison the comparison's line, and the jump after any other truth
test the line where the `if` (or the conditional expression) starts: Dynamo reports the jump's line.
Measured on torch 2.13 and Python 3.11 (`tests/dynamo_corpus/pos_multiline_condition.py`,
`pos_multiline_call_condition.py`, `pos_multiline_comparison.py`, `pos_fp16_clamp_guard.py`,
`pos_multiline_ternary.py`).
"""

from __future__ import annotations

import ast

from ..inference import FunctionAnalysis


def breaking_operand(node: ast.If | ast.IfExp, analysis: FunctionAnalysis) -> ast.AST:
    """The node to report a data-dependent test at: the comparison that breaks, when it is not on
    the first line (`m is not None` on one line, `and x.sum() > 0` on the next), else the `if` or the
    conditional expression itself when its test starts on a later line (`if (` then the test;
    `(a` then `if x.any()`), else the test."""
    test = node.test
    operand = test
    while True:
        if isinstance(operand, ast.BoolOp):
            operand = next((v for v in operand.values if analysis.is_data_dependent(v)), operand.values[0])
        elif isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
            operand = operand.operand
        else:
            break
    if isinstance(operand, ast.Compare) and operand.lineno != node.lineno:
        return operand
    return node if test.lineno != node.lineno else test
