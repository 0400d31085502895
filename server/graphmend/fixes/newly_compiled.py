"""What changes when a fix makes a frame compile that ran eagerly (issue 42, class 6; issue 50).

A break inside a loop makes Dynamo give up on the whole frame: it runs eagerly. Once a fix removes
the break, the frame compiles, and two things it did eagerly change:

- its random draws: under inductor they come from inductor's own generator, so for the same seed
  the masks, the outputs and the gradients differ (they agree again with
  `torch._inductor.config.fallback_random = True`);
- its loops: Dynamo unrolls them, so a loop whose trip count may change between calls (`for t in
  range(x.shape[1])`, a Python int argument, a tensor's rows) compiles the frame again for each new
  count, and after `recompile_limit` (8) counts the frame runs eagerly (measured on torch 2.13: 8
  graphs, then the limit's warning, over 10 sequence lengths). A loop over a fixed count (a literal
  `range`, a module's own `nn.ModuleList` or int attribute, a tuple written out) compiles once.

The values are as random as before, and the loop computes the same: a fix that does either says so.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from ..analysis.aliases import loop_nodes
from ..analysis.liveness import enclosing_loops
from ..analysis.purity import draws_random
from ..diagnostics import Applicability, Fix
from ..inference import FunctionAnalysis
from ..semantics import ancestors, statement_of, walk
from ..torch_api import IS_COMPILING_FUNCTIONS


def random_moved_into_graph(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """The hazard when the break at `node` sits where Dynamo cannot resume after it (a loop, a
    `try`, a `with`: it ran the frame eagerly, which will compile) in a function that draws random
    numbers or asks whether it is compiling, else None."""
    function = analysis.function
    where = _eager_frame(node, function.node) if function is not None else None
    if function is None or where is None:
        return None
    for call in walk(function.node):
        if isinstance(call, ast.Call) and draws_random(call, analysis):
            drawn = ast.unparse(call.func)
            return (
                f"the break is in {where}, so Dynamo ran `{function.node.name}` eagerly; fixed, it compiles, and under "
                f"inductor its random draws (`{drawn}`) come from inductor's generator: for the same seed the values "
                "and gradients differ (unless `torch._inductor.config.fallback_random = True`)"
            )
        if isinstance(call, ast.Call) and analysis.qualified_name(call.func) in IS_COMPILING_FUNCTIONS:
            return (
                f"the break is in {where}, so Dynamo ran `{function.node.name}` eagerly; fixed, it compiles, and "
                f"`{ast.unparse(call.func)}()` becomes true there: the paths it chooses change"
            )
    return None


def _eager_frame(node: ast.AST, function: ast.AST) -> str | None:
    """Where a break at `node` makes Dynamo give up on the whole frame (review 9 measured `try` and
    `with` beside loops), in words; None elsewhere."""
    if loop_nodes(function, node):
        return "a loop"
    chain = ancestors(node, function)
    outermost: ast.AST | None = None
    for child, holder in zip(chain, chain[1:]):
        if isinstance(holder, (ast.Try, ast.With, ast.AsyncWith)) and any(child is s for s in holder.body):
            outermost = holder
    if outermost is None:
        return None
    return "a `try`" if isinstance(outermost, ast.Try) else "a `with`"


def loop_recompiles(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """The hazard when the break at `node` sits in a loop whose trip count may change between
    calls: the frame that ran eagerly will compile once per count."""
    function = analysis.function
    if function is None:
        return None
    statement = statement_of(node, function.node)
    if statement is None:
        return None
    for loop in enclosing_loops(function.node, statement):
        if isinstance(loop, ast.While) or not _fixed_count(loop.iter, analysis):
            header = ast.unparse(loop.test if isinstance(loop, ast.While) else loop.iter)
            return (
                f"the break is in a loop, so Dynamo ran `{function.node.name}` eagerly; fixed, it compiles with the loop "
                f"over `{header}` unrolled, and recompiles for each new trip count (a new sequence length or "
                "batch size; past `recompile_limit`, 8, it runs eagerly again)"
            )
    return None


def _fixed_count(iterable: ast.expr, analysis: FunctionAnalysis) -> bool:
    """Whether Dynamo unrolls this loop the same number of times on every call: a `range` of
    literals or of `self.` attributes (a module's own ints), `len(self.<x>)`, a `self.` attribute (a
    module list), a tuple or list written out; `enumerate`/`zip`/`reversed` of those."""
    if isinstance(iterable, (ast.Tuple, ast.List)):
        return True
    if _module_attribute(iterable, analysis):
        return True
    if not isinstance(iterable, ast.Call) or not isinstance(iterable.func, ast.Name):
        return False
    if not analysis.is_builtin(iterable.func.id):
        return False
    name, arguments = iterable.func.id, iterable.args
    if name == "range":
        return all(_fixed_number(a, analysis) for a in arguments)
    if name in ("enumerate", "reversed", "zip"):
        return bool(arguments) and all(_fixed_count(a, analysis) for a in arguments)
    return False


def _fixed_number(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return _fixed_number(value.operand, analysis)
    if isinstance(value, ast.BinOp):
        return _fixed_number(value.left, analysis) and _fixed_number(value.right, analysis)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len":
        return analysis.is_builtin("len") and len(value.args) == 1 and _module_attribute(value.args[0], analysis)
    return _module_attribute(value, analysis)


def _module_attribute(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    """`self.layers`, `self.config.num_layers`: fixed for the module (Dynamo guards on the module)."""
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and analysis.is_self(value)


def with_hazard(fix: Fix, hazard: str) -> Fix:
    """`fix`, unsafe with `hazard` added."""
    if hazard in fix.hazards:
        return fix
    return replace(fix, applicability=Applicability.UNSAFE, hazards=(*fix.hazards, hazard))
