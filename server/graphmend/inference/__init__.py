"""Value kinds: is an expression a tensor, a bool tensor, a Python value, a logger — or unknown.

A forward, flow-sensitive walk over one function's statements keeps the kind of every local name
(`seq_len = torch.max(ids) + 1` makes `seq_len` a tensor, so `if seq_len > limit:` tests data).
Branches are walked on copies and joined; loop bodies twice, so loop-carried values are seen.
Every expression is offered to a visitor together with the kinds in force at that point.
Unknown stays unknown: graphmend only flags what it can show is a tensor.

`FunctionAnalysis` (`walk`) holds the parts of one function's analysis, each built from the
parts below it, and forwards what callers use under the names they have always had. The package,
in the order each part builds on the last: `state` (what a function's analysis reads of its
module), `scope` (`Scope`: what a name refers to), `expressions` (`ExpressionKinds`: the kinds in
force and the kind of one expression), `parameters` (`ParameterKinds`: the kinds parameters start
with), `compile_time` (`CompileTimeFacts`: what is fixed while Dynamo traces), `bindings`
(`Bindings`: how statements change the kinds in force), `walk` (`Walker`, the walk itself, and
`FunctionAnalysis`) and `module` (`ModuleAnalysis`: facts shared by the functions of one file).
Callers use `FunctionAnalysis` and `ModuleAnalysis`.
"""

from .expressions import is_logger_factory
from .module import ModuleAnalysis
from .state import ModuleFacts
from .walk import ExpressionVisitor, FunctionAnalysis

__all__ = ["ExpressionVisitor", "FunctionAnalysis", "ModuleAnalysis", "ModuleFacts", "is_logger_factory"]
