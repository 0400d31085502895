"""Value kinds: is an expression a tensor, a bool tensor, a Python value, a logger — or unknown.

A forward, flow-sensitive walk over one function's statements keeps the kind of every local name
(`seq_len = torch.max(ids) + 1` makes `seq_len` a tensor, so `if seq_len > limit:` tests data).
Branches are walked on copies and joined; loop bodies twice, so loop-carried values are seen.
Every expression is offered to a visitor together with the kinds in force at that point.
Unknown stays unknown: graphmend only flags what it can show is a tensor.

The package, in the order each part builds on the last: `state` (what every part reads), `scope`
(what a name refers to), `expressions` (the kind of one expression), `compile_time` (what is fixed
while Dynamo traces), `parameters` (the kinds parameters start with), `walk` (`FunctionAnalysis`:
the walk that keeps the kinds in force) and `module` (`ModuleAnalysis`: facts shared by the
functions of one file). Callers use `FunctionAnalysis` and `ModuleAnalysis`.
"""

from .expressions import is_logger_factory
from .module import ModuleAnalysis
from .state import ModuleFacts
from .walk import ExpressionVisitor, FunctionAnalysis

__all__ = ["ExpressionVisitor", "FunctionAnalysis", "ModuleAnalysis", "ModuleFacts", "is_logger_factory"]
