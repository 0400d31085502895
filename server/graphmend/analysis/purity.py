"""Can this code run unconditionally? Purity and faulting operations, by one documented table.

A predicated rewrite evaluates both branches every time. That is exact only when neither branch
changes anything but its own new names, cannot raise where the original would not have run it,
and draws no random numbers (which would shift every later random draw).
"""

from __future__ import annotations

import ast
import math
import weakref

from .. import torch_api
from ..inference import FunctionAnalysis, ModuleFacts
from ..inference.parameters import parameters_with_defaults
from ..kinds import Kind
from ..messages import is_message
from ..semantics import FunctionInfo, attribute_chain, child_nodes, walk
from . import known_ops, torch_ops

_IMPURE_TENSOR_METHODS = frozenset(
    "item tolist numpy backward register_hook retain_grad record_stream bernoulli multinomial cpu_ share_memory_".split()
)
_PURE_BUILTINS = frozenset({"len", "abs", "min", "max", "isinstance", "hasattr", "round"})
# Reads of dicts, lists and sets that copy or look up, and change nothing.
_CONTAINER_READS = frozenset("copy get keys values items".split())
# Methods of str, list, dict and set: a name among them says nothing about a tensor.
_CONTAINER_METHODS = frozenset(n for t in (str, list, dict, set, tuple, bytes) for n in dir(t) if not n.startswith("_"))
# Methods `torch.nn.Module` shares with `torch.Tensor` that change the module in place.
_MODULE_METHODS = frozenset(
    "to cuda cpu float half double bfloat16 type apply share_memory requires_grad_ zero_".split()
)


def dotted(expr: ast.expr) -> str | None:
    """`self.n` → "self.n"; None for anything that is not a plain name or attribute chain."""
    chain = attribute_chain(expr)
    return None if chain is None else ".".join([chain[0], *chain[1]])


def names_in(expr: ast.AST) -> set[str]:
    """Every dotted name read in `expr` (`x`, `self.n`, and their prefixes)."""
    found: set[str] = set()
    for node in walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = dotted(node)
            if name is not None:
                found.add(name)
    return found


def impurity(expr: ast.AST, analysis: FunctionAnalysis, guarded: set[str], condition: bool = False) -> str | None:
    """Why `expr` cannot be evaluated unconditionally, or None when it can. A `condition` may use
    `and`/`or`/`not` on tensors (the rewrite turns them into tensor logic), and it is evaluated
    where the `if` was, so only its lazy operands (after `and`/`or`) must not draw random numbers."""
    always = evaluated_always(expr) if condition else set()
    for node in walk(expr):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return "a branch has a lambda or comprehension"
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return f"a branch has `{type(node).__name__.lower()}`"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if names_in(node.right) & guarded:
                return "a branch divides by a value the condition tests (it would run unguarded)"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if names_in(node.slice) & guarded:
                return "a branch indexes with a value the condition tests (it would run unguarded)"
        if (
            not condition
            and isinstance(node, ast.BoolOp)
            and any(analysis.is_data_dependent(v) for v in node.values[:-1])
        ):
            return "a branch tests a tensor with `and`/`or`"
        if isinstance(node, ast.Call) and _indexes(node, analysis) and any(names_in(a) & guarded for a in node.args):
            return "a branch indexes with a value the condition tests (it would run unguarded)"
        if isinstance(node, ast.Call):
            reason = call_impurity(node, analysis)
            if reason is not None and not (id(node) in always and draws_random(node, analysis)):
                return reason
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            reason = _property_impurity(node, analysis)
            if reason is not None:
                return reason
    return None


def _property_impurity(node: ast.Attribute, analysis: FunctionAnalysis) -> str | None:
    """Reading `self.<name>` where the class defines `name` as a property: its getter runs, judged
    like a call (issue 67, review 6: a getter that prints printed on every call)."""
    owner = analysis.owner
    if owner is None or not analysis.is_self(node.value):
        return None
    getter = owner.find_method(node.attr)
    if getter is None or not _is_property(getter):
        return None
    reason = function_impurity(getter, analysis)
    if reason is None:
        return None
    return f"a branch reads `self.{node.attr}`, a property whose getter {reason.removeprefix('a branch ')}"


def _is_property(method: FunctionInfo) -> bool:
    """Decorated `@property` or `@functools.cached_property`: reading the attribute runs it."""
    return any(
        (dotted(d) or "").rsplit(".", 1)[-1] in ("property", "cached_property") for d in method.node.decorator_list
    )


_INDEXING_FUNCTIONS = frozenset("gather index_select take take_along_dim embedding embedding_bag one_hot".split())


def _indexes(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A lookup by index that raises for an index out of range: `torch.gather`, `F.embedding`,
    `x.index_select(...)`, or a `torch.nn.Embedding` submodule."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _INDEXING_FUNCTIONS
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in _INDEXING_FUNCTIONS:
        return True
    method = analysis.function.method if analysis.function and analysis.is_self(func.value) else None
    if method is None or method.owner is None:
        return False
    constructors = analysis.module.constructors(method.owner).get(func.attr, frozenset())
    return any(c.rsplit(".", 1)[-1] in ("Embedding", "EmbeddingBag") for c in constructors)


def draws_random(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A random draw: `torch.rand*`/`dropout`/`bernoulli`..., or a `torch.nn.Dropout*` submodule."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return qualname.replace("torch.Tensor.", known_ops.METHOD, 1) in torch_ops.RANDOM
    if not isinstance(func, ast.Attribute):
        return False
    if analysis.kind(func.value).is_tensor:
        return known_ops.METHOD + func.attr in torch_ops.RANDOM
    method = analysis.function.method if analysis.function and analysis.is_self(func.value) else None
    if method is None or method.owner is None:
        return False
    constructors = analysis.module.constructors(method.owner).get(func.attr, frozenset())
    return any(c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in _RANDOM_NN_LAYERS for c in constructors)


def evaluated_always(expr: ast.AST) -> set[int]:
    """Nodes of a condition that Python evaluates every time (not in a lazy operand)."""
    found: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        found.add(id(node))
        if isinstance(node, ast.BoolOp):
            stack.append(node.values[0])
        elif isinstance(node, ast.IfExp):
            stack.append(node.test)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(child_nodes(node))
    return found


# What a branch may call and still run unconditionally: the purity table (docs: README, "What a
# fix may run unconditionally"; a test keeps that section equal to this table).
PURITY_TABLE: tuple[tuple[str, str], ...] = (
    (
        "an operation on the allowlist (`graphmend.analysis.known_ops`: `torch.*`, tensor methods, `torch.nn.functional.*`, `torch.special.*`; each entry says why it may run where its branch did not, and `tests/test_known_ops.py` makes torch confirm it)",
        "pure: total (finite with a finite derivative, no effect, no warning), or a restricted domain (`/`, `log`, `sqrt`, ...) that `hazards.py` shields; the entry's condition must hold (`softmax` with `dim`, `embedding` without `max_norm`, `batch_norm` without `training=True`, `where` with three arguments); unsafe, named, unless its backward keeps a zero gradient zero on every value, inf and NaN included (`known_ops.FINITE_BACKWARD`: sums, selections, clamps, shapes, products by a number; not `sin`, `sigmoid`, `softmax`, a product of two tensors)",
    ),
    (
        "any other `torch.*`, `torch.nn.functional.*`, `torch.linalg/fft/special.*` operation or tensor method that returns tensors; `torchvision.transforms.functional.*`, `torchvision.transforms.v2.functional.*`",
        "unsafe, the operation named: graphmend does not know what it does on values the condition excluded; refused where torch states an effect (`graphmend.analysis.torch_ops`, generated from torch: a random draw by the `nondeterministic_seeded` tag, an in-place write by the schema, a training path on by default, an effect an argument turns on) and for `_`-suffixed names and `inplace=`",
    ),
    (
        "`.item()`, `.tolist()`, `.numpy()`, `.backward()`, hooks, and names that are not `torch.Tensor` methods",
        "refused",
    ),
    ("`.copy()`, `.get()`, `.keys()`, `.values()`, `.items()` of a dict, list or set", "pure"),
    (
        "`math.*`; builtins `len`, `abs`, `min`, `max`, `round`, `sum`, `isinstance`, `hasattr`, `int`, `float`, `bool`, `tuple`, `list`, `range`, `enumerate`, `zip`, and `getattr` with a default",
        "pure; unsafe, named, where it may raise on the values the caller passes: `math.*` of a value not known to be a number, `int`/`float`/`bool`/`round` of one (`float(text)`), `min`/`max` of one sequence (empty)",
    ),
    (
        "`self.x(...)` where `__init__` sets `self.x` to an allowlisted `torch.nn` layer (`Linear`, `Bilinear`, `Conv*`, `ConvTranspose*`, `LayerNorm`, `RMSNorm`, `GroupNorm`, `Embedding`, `Identity`, `Flatten`, `Unflatten`, an activation, `Softmax`/`LogSoftmax`/`Softmin`, a pooling layer, `PixelShuffle`)",
        "pure; an `Embedding` (like `gather`, `index_select`, `F.embedding`) is refused when its indices are what the condition tests (out of range, it would raise), and when built with `max_norm` (it renormalises its weight in place); a `Softmax` built without `dim` is unsafe (it warns)",
    ),
    (
        "... `self.x = torch.nn.Dropout*(...)`",
        "refused: draws random numbers in training (running it always shifts later draws)",
    ),
    (
        "... `self.x = torch.nn.BatchNorm*/InstanceNorm*/SyncBatchNorm(...)`",
        "refused: updates its running statistics in training",
    ),
    (
        "a function or method of the same file; `self.x(...)` with `self.x = SameFileModule(...)` (its `forward`); `self.x(...)` with `self.x = function` or `self.x = TABLE[key]`, `TABLE` a module-level dict of functions (every one of them)",
        "pure when its body passes this table, transitively: no store to an attribute or to a value it did not create, no in-place change of an argument, no message, no `raise`, no random draw; and when it has no decorator other than `staticmethod`, `classmethod`, `property` or `torch.compile` (a wrapper may print, count or time each call)",
    ),
    (
        "... whose only `raise` is an argument check (`if config is not None and kwargs: raise ...`, a test of its parameters alone, none a tensor)",
        "unsafe: bad arguments would now raise where the original did not call it",
    ),
    (
        "a module-level function (or table of functions) of another file of the project (`graphmend check <folder>`, the editor's workspace)",
        "judged by the same rules from that file's summary",
    ),
    (
        "a lookup in a Python container (`TABLE[key]`, `self.scales[i]`; not a slice, nor a tensor's sizes), `a / b`, `a // b`, `a % b` of numbers (not by a nonzero number written in the code), an attribute of an object graphmend does not know (`cfg.scale`)",
        "unsafe, named: it raises (KeyError, IndexError, ZeroDivisionError, AttributeError) or runs a getter for values the caller may pass only where the branch did not run",
    ),
    ("anything else", "refused: not known to be pure"),
)

_PURE_NN_LAYERS = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LayerNorm
    RMSNorm GroupNorm Embedding Identity Flatten Unflatten ReLU ReLU6 GELU SiLU Mish Tanh Sigmoid Softmax
    LogSoftmax LeakyReLU ELU SELU CELU Hardtanh Hardswish Hardsigmoid PReLU Softplus Softsign GLU
    MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d
    AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d Upsample PixelShuffle PixelUnshuffle
    """.split()
)
_RANDOM_NN_LAYERS = frozenset("Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout RReLU".split())
# torch.nn layers with parameters (the rest of the layers above hold none)
_PARAMETERIZED_NN_LAYERS = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LayerNorm
    RMSNorm GroupNorm Embedding PReLU
    """.split()
)
_STATEFUL_NN_LAYERS = frozenset(
    "BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyBatchNorm1d".split()
)
_PURE_NAMESPACES = ("math.",)
# Other libraries' tensor functions: not refused, but not on the allowlist either (unsafe, named).
_TENSOR_LIBRARIES = ("torchvision.transforms.functional.", "torchvision.transforms.v2.functional.")
_PURE_BUILTIN_CALLS = _PURE_BUILTINS | frozenset("sum int float bool tuple list range enumerate zip".split())
_ALIASING_METHODS = frozenset(
    """
    view view_as reshape reshape_as expand expand_as transpose permute squeeze unsqueeze flatten unflatten
    contiguous detach to type type_as float half double bfloat16 long int bool narrow select unbind chunk
    split t T mT movedim swapaxes swapdims diagonal as_strided real imag
    """.split()
)

# Same-file functions: why each is not pure (None: pure), per analysed module.
_SUMMARIES: weakref.WeakKeyDictionary[ModuleFacts, dict[int, tuple[str | None, str | None]]] = (
    weakref.WeakKeyDictionary()
)
_IN_PROGRESS = "calls itself (recursion)"


def out_argument(call: ast.Call) -> ast.expr | None:
    """The tensor a call writes its result into (`torch.add(a, b, out=buf)`), if it names one."""
    written = next((k.value for k in call.keywords if k.arg == "out"), None)
    return None if written is None or (isinstance(written, ast.Constant) and written.value is None) else written


def out_write(written: ast.expr) -> str:
    return f"a branch writes into `{ast.unparse(written)}` (`out=`), which would then be written on every call"


def call_impurity(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """Why this call cannot run where the original would not have run it, by the purity table."""
    func = call.func
    if any(k.arg == "inplace" for k in call.keywords) or in_place(call, analysis):
        return "a branch calls an operation with `inplace=`"
    written = out_argument(call)
    if written is not None:
        return out_write(written)
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        return _qualified_impurity(qualname, analysis, call)
    if isinstance(func, ast.Name) and analysis.is_builtin(func.id):
        if func.id in _PURE_BUILTIN_CALLS or (func.id == "getattr" and len(call.args) == 3 and not call.keywords):
            return None  # `getattr` with a default never raises AttributeError
        return f"a branch calls `{func.id}`, which is not known to be pure"
    if isinstance(func, ast.Attribute):
        receiver = analysis.kind(func.value)
        if receiver.is_tensor:
            return _tensor_method_impurity(func.attr, call)
        if analysis.is_self(func.value):
            known, reason = _submodule_impurity(func.attr, analysis)
            if known:
                return reason
        elif receiver is Kind.UNKNOWN and _tensor_method_on_unknown(func.attr):
            # a tensor's own method: on a tensor pure unless torch states an effect, anything else has no such method
            effect = known_ops.stated_effect(known_ops.METHOD + func.attr, call)
            return None if effect is None else f"a branch calls `.{func.attr}()`, which {effect}"
        elif receiver is Kind.UNKNOWN and func.attr in torch_api.TENSOR_METHODS and _makes_tensor(func.value, analysis):
            return _tensor_method_impurity(func.attr, call)  # `.to` on `mask.unsqueeze(-1)`: a tensor for sure
        elif receiver in (Kind.UNKNOWN, Kind.CONTAINER) and func.attr in _CONTAINER_READS:
            return None
    known, reason = _same_file_impurity(call, analysis)
    if known:
        return reason
    return f"a branch calls `{_callee(func)}`, which is not known to be pure"


def _tensor_method_on_unknown(method: str) -> bool:
    """A pure method of `torch.Tensor` that no other common object has under the same name with
    an effect: `Module.to/float/cuda(...)` move a module in place, so those are not trusted."""
    return (
        method in torch_api.TENSOR_METHODS
        and method not in _MODULE_METHODS
        and not method.endswith("_")
        and method not in _IMPURE_TENSOR_METHODS
        and known_ops.METHOD + method not in torch_ops.RANDOM
    )


def _makes_tensor(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A call of a method that only tensors have (`x.unsqueeze(-1)`): whatever `x` is, a result
    means it was a tensor, and so is the result."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and _tensor_method_on_unknown(expr.func.attr)
        and expr.func.attr not in _CONTAINER_METHODS
    )


def _callee(func: ast.expr) -> str:
    name = dotted(func)
    if name is not None:
        return name
    return f"….{func.attr}" if isinstance(func, ast.Attribute) else "a computed function"


def _qualified_impurity(qualname: str, analysis: FunctionAnalysis, call: ast.Call | None = None) -> str | None:
    name = qualname.rsplit(".", 1)[-1]
    if qualname.startswith(_PURE_NAMESPACES) or qualname.startswith(_TENSOR_LIBRARIES):
        return None
    foreign = analysis.module.regions.context.foreign_verdict(qualname)
    if foreign is not None:
        return (
            None if foreign[0] is None else f"a branch calls `{qualname}`, which {foreign[0].removeprefix('a branch ')}"
        )
    if not qualname.startswith("torch.") or analysis.torch_call_kind(qualname) is Kind.UNKNOWN:
        return f"a branch calls `{qualname}`, which is not known to be pure"
    if name.endswith("_"):
        return f"a branch calls the in-place `{qualname}`"
    effect = known_ops.stated_effect(qualname, call)
    if effect is not None:
        return f"a branch calls `{qualname}`, which {effect}"
    return None


def _tensor_method_impurity(method: str, call: ast.Call | None = None) -> str | None:
    if method.endswith("_"):
        return f"a branch changes a tensor in place (`.{method}`)"
    if method in _IMPURE_TENSOR_METHODS:
        return f"a branch calls `.{method}()`"
    if method not in torch_api.TENSOR_METHODS:
        return f"a branch calls `.{method}()`, which is not a tensor method known to be pure"
    effect = known_ops.stated_effect(known_ops.METHOD + method, call)
    if effect is not None:
        return f"a branch calls `.{method}()`, which {effect}"
    return None


def _is_parameter(name: str, function: FunctionInfo) -> bool:
    starred = (function.node.args.vararg, function.node.args.kwarg)
    return name in function.parameter_names or any(a is not None and a.arg == name for a in starred)


def plain_values(name: str, analysis: FunctionAnalysis) -> list[ast.expr]:
    """Every value the function binds `name` to, when each of its bindings is a plain `name =
    value` (empty for a parameter, or a name some other form binds: a loop, an unpacking, `+=`)."""
    function = analysis.function
    if function is None or _is_parameter(name, function):
        return []
    values = [
        node.value
        for node in walk(function.node)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
    ]
    bindings = sum(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in walk(function.node)
    )
    return values if len(values) == bindings else []


def assigned_once(name: str, analysis: FunctionAnalysis) -> ast.expr | None:
    """The value of the function's one plain assignment to `name` (None: none, or several). A
    parameter is bound by the call too: a read of it may be the caller's value, so None."""
    function = analysis.function
    if function is None or _is_parameter(name, function):
        return None
    values = [
        node.value
        for node in walk(function.node)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return values[0] if len(values) == 1 else None


# Uses of a tensor that read no value a gradient flows through: its metadata, its size, a test.
_METADATA_BUILTINS = frozenset({"len", "isinstance", "type", "id", "callable"})


def differentiable_reads(tree: ast.AST, name: str) -> list[ast.Name]:
    """The reads of `name` in `tree` through which a gradient may flow: not its metadata
    (`x.shape`, `x.size()`, `x.dtype`), `len(x)`, `x.detach()`, nor a comparison (`x > 0`, `x is
    None`), whose results carry no gradient."""
    silent: set[int] = set()
    reads: list[ast.Name] = []
    for node in walk(tree):
        if isinstance(node, ast.Attribute) and (
            node.attr in torch_api.TENSOR_PYTHON_ATTRIBUTES or node.attr in torch_api.TENSOR_PYTHON_METHODS
        ):
            silent.add(id(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
            silent.add(id(node.func.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _METADATA_BUILTINS:
            silent.update(id(a) for a in node.args)
        elif isinstance(node, ast.Compare):
            silent.update(id(operand) for operand in [node.left, *node.comparators])
        elif (
            isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in silent
        ):
            reads.append(node)
    return reads


def gradient_free(name: str, analysis: FunctionAnalysis) -> bool:
    """`name` is assigned once, to a value no gradient flows from: a number, a comparison, a tensor
    made from sizes or data (`torch.zeros(...)`, `torch.ones_like(x)`), or a detached one."""
    value = assigned_once(name, analysis)
    if value is None:
        return False
    if isinstance(value, (ast.Constant, ast.Compare)):
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr == "detach":
        return True
    qualname = analysis.qualified_name(value.func) or ""
    last = qualname.rsplit(".", 1)[-1]
    return qualname.startswith("torch.") and (last in torch_api.FACTORY_FUNCTIONS or last.endswith("_like"))


def computed_harmlessly(
    name: str, analysis: FunctionAnalysis, reached: set[str], seen: frozenset[str] = frozenset()
) -> bool:
    """`name` is assigned once, by total allowlisted operations (`known_ops`: finite with a finite
    derivative, not a shielded domain), from tensors whose gradients flow anyway (`reached`), from
    other such names, and from Python values: a zero gradient sent into it stays zero, and reaches
    nothing that had none. `peak = x.abs().max()` where `x` itself is read on every path."""
    value = assigned_once(name, analysis)
    if value is None or name in seen:
        return False
    called = {id(n.func) for n in walk(value) if isinstance(n, ast.Call)}
    for node in walk(value):
        if isinstance(node, ast.Call) and not _total_operation(node, analysis):
            return False
        if isinstance(node, ast.BinOp) and not (
            isinstance(node.op, (ast.Add, ast.Sub))
            or (isinstance(node.op, ast.Mult) and any(_finite_literal(side) for side in (node.left, node.right)))
        ):
            return False  # `h * h`: its derivative is the other operand, inf times the zero gradient is NaN
        if isinstance(node, ast.Attribute) and trained_state(node, analysis) is not None:
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in called:
            if node.id in reached or analysis.kind(node) is Kind.PYTHON or analysis.qualified_name(node) is not None:
                continue
            if not computed_harmlessly(node.id, analysis, reached, seen | {name}):
                return False
    return True


def _total_operation(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """A call of an allowlisted operation that is total (not a shielded domain) and meets its entry."""
    qualname = analysis.qualified_name(call.func)
    if qualname is not None:
        name, method = qualname, False
    elif isinstance(call.func, ast.Attribute) and not analysis.is_self(call.func.value):
        name, method = known_ops.METHOD + call.func.attr, True
    else:
        return False
    entry = known_ops.known(name)
    return (
        entry is not None
        and not entry.shielded
        and known_ops.finite_backward(name)  # `sin` at inf: a zero gradient times NaN (review 13)
        and known_ops.unmet(entry, call, method) is None
    )


def _finite_literal(expr: ast.expr) -> bool:
    """A number written in the code within float16's range: a product by it keeps a zero gradient zero."""
    value = number_literal(expr)
    return value is not None and math.isfinite(value) and abs(value) <= 65504


def number_literal(expr: ast.expr) -> float | None:
    """The value of a number written in the code (`2`, `-1e-5`), or None: not a bool, not a name."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = number_literal(expr.operand)
        return None if inner is None else (-inner if isinstance(expr.op, ast.USub) else inner)
    return None


def trained_state(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """What `node` reads that may hold parameters: `self.<attribute>` (a submodule it calls, other
    than the torch.nn layers known to hold none, an `nn.Parameter`, or an attribute graphmend does
    not know is free of them: set by `setattr`, a factory, a base class such as `nn.Linear`, or a
    property), `getattr(self, "<attribute>", ...)`, or a module-level name of this file. A rewrite
    that runs such code where the original did not gives those parameters a zero gradient instead of
    none (issue 67, review 7: seven routes to a parameter that an allowlist of routes missed)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):  # `g = self.gamma`, then `g`
        value = assigned_once(node.id, analysis)
        if isinstance(value, (ast.Attribute, ast.Call)):
            return trained_state(value, analysis)
        return _module_level_state(node, analysis)
    attribute = _self_attribute(node, analysis)
    if attribute is None:
        return None
    if _registered("register_parameter", attribute, analysis):
        return f"self.{attribute}"
    constructors = _attribute_constructors(attribute, analysis)
    if constructors is None:  # a method of the class: a property may return a parameter
        getter = analysis.owner.find_method(attribute) if analysis.owner is not None else None
        return f"self.{attribute}" if getter is not None and _is_property(getter) else None
    if not constructors or "?" in constructors:
        if _registered("register_buffer", attribute, analysis) or attribute in ("training",):
            return None
        kind = analysis.kind(node) if isinstance(node, ast.Attribute) else Kind.UNKNOWN
        if kind in (Kind.PYTHON, Kind.NONE, Kind.BOOL_TENSOR, Kind.CONTAINER, Kind.LOGGER, Kind.NUMPY):
            return None
        return f"self.{attribute}"
    for constructor in constructors:
        if constructor in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return f"self.{attribute}"
        layer = constructor.rsplit(".", 1)[-1]
        parameterless = (
            constructor.startswith("torch.nn.")
            and layer not in _PARAMETERIZED_NN_LAYERS
            and (layer in _PURE_NN_LAYERS or layer in _RANDOM_NN_LAYERS)
        )
        if not parameterless:
            return f"self.{attribute}"
    return None


def _self_attribute(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """`self.<attribute>` read, or `getattr(self, "<attribute>"[, default])`: the attribute."""
    if isinstance(node, ast.Attribute) and analysis.is_self(node.value) and isinstance(node.ctx, ast.Load):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and analysis.is_builtin("getattr")
        and len(node.args) >= 2
        and analysis.is_self(node.args[0])
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def _module_level_state(node: ast.Name, analysis: FunctionAnalysis) -> str | None:
    """A module-level name of this file, assigned something other than a number, string, function
    or class (`GAMMA = nn.Parameter(...)`, a tensor made at import): it may be a parameter."""
    function = analysis.function
    if function is None or node.id in function.local_names:
        return None
    for stmt in analysis.module.index.tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == node.id for t in targets):
            value = stmt.value
            if value is None or isinstance(value, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.Dict, ast.Set)):
                continue
            if analysis.kind(node) in (Kind.PYTHON, Kind.NONE, Kind.CONTAINER, Kind.LOGGER):
                continue
            return node.id
    return None


def called_submodule(node: ast.AST, analysis: FunctionAnalysis) -> str | None:
    """`self.<attribute>` when `node` calls it and `__init__` built it as an `nn.Module` (a torch.nn
    layer or a module class of this file): a call that runs its forward hooks and parametrizations."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    func = node.func
    if not analysis.is_self(func.value):
        return None
    for constructor in _attribute_constructors(func.attr, analysis) or ():
        klass = analysis.index.classes.get(constructor)
        if constructor.startswith("torch.nn.") or (klass is not None and klass.is_module):
            return f"self.{func.attr}"
    return None


def _registered(method: str, attribute: str, analysis: FunctionAnalysis) -> bool:
    """`self.<method>("<attribute>", ...)` (`register_parameter`, `register_buffer`) somewhere in this
    method's class."""
    owner = analysis.owner
    if owner is None:
        return False
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == attribute
        for klass in owner.mro()
        for other in klass.methods.values()
        for node in walk(other.node)
    )


def _attribute_constructors(attribute: str, analysis: FunctionAnalysis) -> frozenset[str] | None:
    """What `__init__` built for `self.<attribute>` in this method's class (`constructors`); None
    outside a method, or for a method of the class (judged as a same-file function)."""
    owner = analysis.owner
    if owner is None or owner.find_method(attribute) is not None:
        return None
    return analysis.module.constructors(owner).get(attribute, frozenset())


def _submodule_impurity(attribute: str, analysis: FunctionAnalysis) -> tuple[bool, str | None]:
    """`self.<attribute>(...)` judged by what `__init__` built: (known, why not pure)."""
    constructors = _attribute_constructors(attribute, analysis)
    if not constructors or "?" in constructors:
        return False, None
    for constructor in sorted(constructors):
        layer = constructor.rsplit(".", 1)[-1]
        from_nn = constructor.startswith("torch.nn.")
        if from_nn and built_in_place(attribute, analysis):
            return True, f"a branch calls `self.{attribute}` (`{layer}` built to write its input in place)"
        entry = known_ops.known(known_ops.LAYER + layer) if from_nn else None
        if entry is not None and entry.falsy is not None:
            built = _built_with(attribute, entry, analysis)
            if built is not None:
                effect = entry.reason.split("; ", 1)[-1].split(", so ", 1)[0]
                return True, f"a branch calls `self.{attribute}` (`{layer}` built {built}): {effect}"
        if entry is not None:
            continue
        if from_nn and layer in _RANDOM_NN_LAYERS:
            return True, f"a branch calls `self.{attribute}` (`{layer}`), which draws random numbers in training"
        if from_nn and layer in _STATEFUL_NN_LAYERS:
            return (
                True,
                f"a branch calls `self.{attribute}` (`{layer}`), which updates its running statistics in training",
            )
        forward = (
            analysis.index.classes[constructor].find_method("forward")
            if constructor in analysis.index.classes
            else None
        )
        if forward is None:
            return False, None
        reason = function_impurity(forward, analysis)
        if reason is not None:
            return True, f"a branch calls `self.{attribute}`, whose `forward` {reason.removeprefix('a branch ')}"
    return True, None


def built_in_place(attribute: str, analysis: FunctionAnalysis) -> bool:
    """`__init__` builds `self.<attribute>` with `inplace` given, by keyword or at the position
    torch's signature gives it (`nn.ReLU(inplace=True)`, `nn.LeakyReLU(0.1, True)`)."""
    owner = analysis.owner
    return owner is not None and any(
        isinstance(value, ast.Call) and in_place(value, analysis)
        for _, value in analysis.module.init_values(owner).get(attribute, [])
    )


def in_place(call: ast.Call, analysis: FunctionAnalysis) -> bool:
    """`inplace=` given as anything but a literal False or None, by keyword or where torch's
    signature takes it positionally (`F.relu(x, True)`, `nn.LeakyReLU(0.1, True)`)."""
    return known_ops.given(call, analysis.qualified_name(call.func) or "", "inplace")


def _built_with(attribute: str, entry: known_ops.KnownOp, analysis: FunctionAnalysis) -> str | None:
    """What a constructor of `self.<attribute>` passes that `entry` must not have (`Embedding(...,
    max_norm=1.0)`, `Softmax()` without `dim`), or None where every constructor meets it."""
    owner = analysis.owner
    if owner is None:
        return None
    for _, value in analysis.module.init_values(owner).get(attribute, []):
        if isinstance(value, ast.Call):
            unmet = known_ops.unmet(entry, value)
            if unmet is not None:
                return unmet
    return None


def _unknown_operation(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The hazard of a torch operation this call runs that the allowlist does not hold (or holds
    under a condition the call does not meet: `F.softmax(x)` without `dim`); None for one it holds,
    for a torch function returning a Python value (`torch.finfo`), and for what is not torch's."""
    func = call.func
    qualname = analysis.qualified_name(func)
    if qualname is not None:
        if qualname.startswith(_TENSOR_LIBRARIES):
            return known_ops.unknown_words(qualname)
        if not qualname.startswith("torch.") or not analysis.torch_call_kind(qualname).is_tensor:
            return None
        entry = known_ops.known(qualname)
        unmet = None if entry is None else known_ops.unmet(entry, call)
        if entry is None or unmet is not None:
            return known_ops.unknown_words(qualname, unmet)
        return _shape_caveat(qualname, f"`{qualname}`", call, analysis)
    if not isinstance(func, ast.Attribute):
        return None
    method = func.attr
    receiver = analysis.kind(func.value)
    if analysis.is_self(func.value):
        return _unknown_layer(method, analysis)
    on_tensor = receiver.is_tensor or (
        receiver is Kind.UNKNOWN and (_tensor_method_on_unknown(method) or _makes_tensor(func.value, analysis))
    )
    if not on_tensor or method not in torch_api.TENSOR_METHODS or method in torch_api.TENSOR_PYTHON_METHODS:
        return None
    if receiver is Kind.UNKNOWN and method in _CONTAINER_METHODS and not _makes_tensor(func.value, analysis):
        return None  # `.split(",")`, `.count(...)`: a string's or list's method as much as a tensor's
    entry = known_ops.known(known_ops.METHOD + method)
    unmet = None if entry is None else known_ops.unmet(entry, call, method=True)
    if entry is None or unmet is not None:
        return known_ops.unknown_words(f".{method}()", unmet)
    return _shape_caveat(known_ops.METHOD + method, f"`.{method}()`", call, analysis)


def _shape_caveat(name: str, shown: str, call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """The hazard of an allowlisted operation that raises for tensors of some ranks or sizes, or
    called with a dimension or size (`torch.cumsum(h, 1)` of a 1-d `h`, `h.tril()` of a vector):
    graphmend does not know the shapes that reach the branch where it did not run (issue 67,
    reviews 9 and 10)."""
    limit = known_ops.shape_limit(name, call, lambda expr: analysis.kind(expr).is_tensor)
    return None if limit is None else _shape_words(shown, limit)


def _shape_words(shown: str, limit: str, verb: str = "calls") -> str:
    return (
        f"a branch {verb} {shown}{',' if limit.startswith('which') else ''} {limit}: graphmend does not know the shapes that reach it where the branch did not "
        "run, and the rewrite calls it on every call"
    )


def _unknown_layer(attribute: str, analysis: FunctionAnalysis) -> str | None:
    """The hazard of `self.<attribute>(...)` where `__init__` built an allowlisted torch.nn layer
    without what its entry needs (`nn.Softmax()` without `dim`, which warns on every call)."""
    for constructor in sorted(_attribute_constructors(attribute, analysis) or ()):
        entry = known_ops.known(constructor) if known_ops.is_layer(constructor) else None
        if entry is not None and entry.needs is not None:
            built = _built_with(attribute, entry, analysis)
            if built is not None:
                return known_ops.unknown_words(
                    f"self.{attribute}", f"(`{constructor.rsplit('.', 1)[-1]}` built {built})"
                )
        if entry is not None and constructor not in known_ops.SHAPE_FREE:
            return _shape_words(
                f"`self.{attribute}` (a `{constructor.rsplit('.', 1)[-1]}`)",
                "which raises for an input of some rank or size (its weights fix the sizes it takes)",
            )
    return None


def _callee_verdicts(call: ast.Call, analysis: FunctionAnalysis) -> list[tuple[str, str | None, str | None]] | None:
    """(name, why not pure, caveat) of each function a call may run, when they are known: a
    function or method of this file, `self.fn(...)` bound to a function or to a lookup in a
    module-level table of functions, or a function of another file of the project."""
    if analysis.function is None:
        return None
    regions = analysis.module.regions
    callee = regions.resolve_call(call, analysis.function)
    if callee is not None:
        return [(dotted(call.func) or callee.name, *function_verdict(callee, analysis))]
    bound = regions.attribute_functions(call, analysis.function)
    if bound is None:
        return None
    functions, foreign = bound
    verdicts = [(f.name, *function_verdict(f, analysis)) for f in functions]
    if foreign is not None:
        found = regions.context.foreign_verdict(foreign.target)
        if found is None:
            return None
        verdicts.append((foreign.target.rsplit(".", 1)[-1], *found))
    return verdicts


def _same_file_impurity(call: ast.Call, analysis: FunctionAnalysis) -> tuple[bool, str | None]:
    """A call of a function whose body graphmend can read (see `_callee_verdicts`): (known, why not pure)."""
    verdicts = _callee_verdicts(call, analysis)
    if verdicts is None:
        return False, None
    for name, reason, _ in verdicts:
        if reason is not None:
            return True, f"a branch calls `{dotted(call.func) or name}`, which {reason.removeprefix('a branch ')}"
    return True, None


def call_caveat(call: ast.Call, analysis: FunctionAnalysis) -> str | None:
    """What running this (pure) call unconditionally may still change: an operation the allowlist
    does not hold (`known_ops`), or its callee's argument checks, which may raise where the original
    would not have called it (or such an operation in its callee's body)."""
    qualname = analysis.qualified_name(call.func)
    if (
        qualname is not None
        and qualname.startswith("math.")
        and not all(analysis.kind(a) is Kind.PYTHON for a in call.args)
    ):
        return (
            f"a branch calls `{qualname}` on a value graphmend does not know to be a number in its domain: it raises "
            "(ValueError, OverflowError) outside it, and the rewrite calls it on every call"
        )
    if isinstance(call.func, ast.Name) and analysis.is_builtin(call.func.id):
        return _builtin_caveat(call, call.func.id, analysis)
    if qualname is not None:
        found = analysis.module.regions.context.foreign_verdict(qualname)
        if found is not None:
            return found[1]
    unknown = _caller_size_caveat(call, qualname, analysis) or _unknown_operation(call, analysis)
    if unknown is not None or qualname is not None:
        return unknown
    for name, reason, caveat in _callee_verdicts(call, analysis) or ():
        if reason is None and caveat is not None:
            if caveat.startswith("a branch "):  # an operation its body runs
                return f"a branch calls `{dotted(call.func) or name}`, which {caveat.removeprefix('a branch ')}"
            return caveat
    return None


# Shape operations that raise for sizes that do not fit the tensor (a negative repeat, a view of
# the wrong size, an index past the end of a dimension, a chunk of 0).
_SIZED = frozenset("view reshape repeat expand tile narrow select unflatten split chunk".split())


def _caller_size_caveat(call: ast.Call, qualname: str | None, analysis: FunctionAnalysis) -> str | None:
    """`x.repeat(n, 1)`, `x.view(b, -1)` with `n`/`b` a Python value the caller passes: sizes that
    may not fit the tensor raise, and the caller may pass those only where the branch did not run."""
    name = qualname.rsplit(".", 1)[-1] if qualname is not None and qualname.startswith("torch.") else None
    if name is None and isinstance(call.func, ast.Attribute) and not analysis.is_self(call.func.value):
        name = call.func.attr if analysis.kind(call.func.value) is not Kind.CONTAINER else None
    if name not in _SIZED or analysis.function is None:
        return None
    parameters = analysis.function.parameter_names
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        for node in walk(argument):
            if isinstance(node, ast.Name) and node.id in parameters and not analysis.kind(node).is_tensor:
                if analysis.has_tensor_evidence(node.id):
                    continue
                return (
                    f"a branch calls `{_callee(call.func)}` with `{node.id}`, a size the caller passes: one that does "
                    "not fit the tensor raises, and the rewrite calls it on every call"
                )
    return None


# Builtins that raise on some values of the right type: a conversion of a string or of a tensor of
# more than one element, the extreme of an empty sequence.
_CONVERSIONS = frozenset({"int", "float", "bool", "complex", "round"})
_EXTREMES = frozenset({"min", "max"})


def _builtin_caveat(call: ast.Call, name: str, analysis: FunctionAnalysis) -> str | None:
    """`float(s)` of a value not known to be a number (ValueError for a string like "abc",
    RuntimeError for a tensor of several elements); `max(seq)` of one sequence (ValueError where
    it is empty, unless a `default=` is given)."""
    if name in _CONVERSIONS and call.args and not _number(call.args[0], analysis) and not _converts(name, call.args[0]):
        return (
            f"a branch converts `{ast.unparse(call.args[0])}` with `{name}`, which raises (ValueError, TypeError, "
            "RuntimeError) for a value graphmend does not know to be a number, and the rewrite converts it on every call"
        )
    if name in _EXTREMES and len(call.args) == 1 and not any(k.arg == "default" for k in call.keywords):
        return (
            f"a branch takes `{name}` of `{ast.unparse(call.args[0])}`, which raises ValueError where the sequence is "
            "empty, and the rewrite takes it on every call"
        )
    return None


def _converts(name: str, expr: ast.expr) -> bool:
    """A string written in the code that the conversion takes: `float("-inf")`."""
    if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str) and name in ("int", "float", "complex")):
        return False
    try:
        {"int": int, "float": float, "complex": complex}[name](expr.value)
    except ValueError:
        return False
    return True


def _number(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """Known to be a Python number (or a bool): a number written in the code, arithmetic of
    numbers, a tensor's size or `len(...)`; a string's kind is Python too, so a plain name is not."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float, bool))
    if isinstance(expr, ast.UnaryOp):
        return _number(expr.operand, analysis)
    if isinstance(expr, ast.BinOp):
        return analysis.kind(expr) is Kind.PYTHON and not isinstance(expr.op, ast.Mod)  # `"%s" % v` is a string
    if isinstance(expr, ast.Subscript):
        return _sizes(expr.value, analysis)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and analysis.is_builtin(func.id):
            return func.id in ("len", "int", "float", "round", "abs")
        return isinstance(func, ast.Attribute) and func.attr in ("numel", "dim", "nelement", "element_size")
    return isinstance(expr, ast.Attribute) and expr.attr in ("ndim", "itemsize", "nbytes")


def caveats(exprs: list[ast.expr], analysis: FunctionAnalysis, always: frozenset[int] = frozenset()) -> list[str]:
    """Why code reading `exprs`, run where the original did not run it, is unsafe although each
    part is allowed (`call_caveat`): an operation not on the allowlist, or a callee's argument
    checks. The calls in `always` (a first condition's operands that are not lazy) ran in the
    original too."""
    reasons: list[str] = []
    for expr in exprs:
        called = {id(node.func) for node in walk(expr) if isinstance(node, ast.Call)}
        for node in walk(expr):
            if id(node) in always:
                continue
            caveat = call_caveat(node, analysis) if isinstance(node, ast.Call) else None
            if isinstance(node, ast.Attribute) and node.attr in _WARNING_TRANSPOSES:
                caveat = _transpose_caveat(node, analysis)
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                caveat = _index_caveat(node, analysis) or _lookup_caveat(node, analysis)
            if isinstance(node, (ast.BinOp, ast.UnaryOp)):
                caveat = caveat or _omitted_operand_caveat(node, analysis) or _matrix_product_caveat(node, analysis)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called:
                caveat = caveat or _foreign_attribute_caveat(node, analysis)
            if caveat is not None and caveat not in reasons:
                reasons.append(caveat)
    return reasons


# `x.T` and `x.H` warn (deprecated) on a tensor of other than 2 dimensions: an error under `-W error`.
_WARNING_TRANSPOSES = ("T", "H")


def _index_caveat(node: ast.Subscript, analysis: FunctionAnalysis) -> str | None:
    """The hazard of an integer index into a tensor (`x[0]`, `x[:, -1]`): it raises IndexError where
    the tensor has no such element, which graphmend cannot rule out (issue 67, review 6: `x[0]` of
    an empty tensor, in the branch not taken, raised on every call after the rewrite)."""
    kind = analysis.kind(node.value)
    if not (kind.is_tensor or (isinstance(node.value, ast.Name) and analysis.has_tensor_evidence(node.value.id))):
        return None
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(_integer(part) for part in parts):
        return (
            f"a branch indexes `{ast.unparse(node)}`, which raises IndexError where the tensor has no such element "
            "(graphmend does not know its size), and the rewrite indexes it on every call"
        )
    if any(isinstance(part, ast.Slice) for part in parts):  # `h[:, :2]` of a vector, `h[1:]` of a 0-d tensor
        return (
            f"a branch slices `{ast.unparse(node)}`, which raises IndexError for a tensor of fewer dimensions (a 0-d "
            "one cannot be sliced; graphmend does not know its rank), and the rewrite slices it on every call"
        )
    return None


def _lookup_caveat(node: ast.Subscript, analysis: FunctionAnalysis) -> str | None:
    """The hazard of a lookup in a Python container (`TABLE[key]`, `self.scales[i]`): it raises
    KeyError or IndexError for a key the container lacks, which the caller may pass only on the
    calls that did not take the branch. A slice never raises, nor does an index into a tensor's
    sizes (`x.shape[-1]`: the rank is the same on every path of the `if`)."""
    kind = analysis.kind(node.value)
    if kind.is_tensor or (isinstance(node.value, ast.Name) and analysis.has_tensor_evidence(node.value.id)):
        return None
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if all(isinstance(part, ast.Slice) for part in parts) or _sizes(node.value, analysis):
        return None
    return (
        f"a branch looks up `{ast.unparse(node)}`, which raises (KeyError, IndexError) for a key or index the "
        "container lacks, and the rewrite looks it up on every call, also where the original did not"
    )


def _sizes(expr: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A tensor's sizes or strides: `x.shape`, `x.size()`, `x.stride()`."""
    if isinstance(expr, ast.Call):
        expr = expr.func
        if not (isinstance(expr, ast.Attribute) and expr.attr in ("size", "stride")):
            return False
    elif not (isinstance(expr, ast.Attribute) and expr.attr == "shape"):
        return False
    return analysis.kind(expr.value) is not Kind.SELF and not analysis.is_self(expr.value)


def _matrix_product_caveat(node: ast.BinOp | ast.UnaryOp, analysis: FunctionAnalysis) -> str | None:
    """`a @ b`: it raises for a 0-d operand or sizes that do not match, which graphmend cannot rule
    out for the shapes that reach the branch where it did not run."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.MatMult):
        return None
    return _shape_words(
        f"`{ast.unparse(node)}`", "which raises for a 0-d operand or sizes that do not match", "computes"
    )


def _omitted_operand_caveat(node: ast.BinOp | ast.UnaryOp, analysis: FunctionAnalysis) -> str | None:
    """`h * scale` with `scale=None` the parameter's default: a caller that leaves it out where the
    branch does not run gets a TypeError after the rewrite (arithmetic with None raises)."""
    operands = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.operand,)
    for operand in operands:
        if isinstance(operand, ast.Name) and _defaults_to_none(operand.id, analysis):
            return (
                f"a branch computes `{ast.unparse(node)}`, where `{operand.id}` defaults to None: a caller that leaves "
                "it out where the branch did not run gets a TypeError, as the rewrite computes it on every call"
            )
    return None


def _defaults_to_none(name: str, analysis: FunctionAnalysis) -> bool:
    """`name` is a parameter of the analysed function whose default is None, which the function
    neither rebinds nor tests (`if scale is not None`, `if scale:`, `scale or 1.0` anywhere: taken
    as the guard the branch runs under)."""
    if analysis.function is None:
        return False
    for node in walk(analysis.function.node):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)) and name in names_in(node.test):
            return False
        if isinstance(node, ast.BoolOp) and any(isinstance(v, ast.Name) and v.id == name for v in node.values):
            return False
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return False
    return any(
        a.arg == name and isinstance(d, ast.Constant) and d.value is None
        for a, d in parameters_with_defaults(analysis.function.node.args)
    )


def _foreign_attribute_caveat(node: ast.Attribute, analysis: FunctionAnalysis) -> str | None:
    """The hazard of reading an attribute of an object graphmend does not know (`cfg.scale`, a
    parameter of unknown type): a property's getter may run code with an effect or raise, and a
    plain attribute the object lacks raises AttributeError, where the original did not read it.
    `self`'s attributes, modules' names, a tensor's attributes and a Python value's are known."""
    receiver = node.value
    if not isinstance(receiver, ast.Name) or analysis.is_self(receiver):
        return None
    if analysis.qualified_name(node) is not None or analysis.qualified_name(receiver) is not None:
        return None
    kind = analysis.kind(node.value)
    if kind is not Kind.UNKNOWN or analysis.has_tensor_evidence(receiver.id):
        return None
    if node.attr in torch_api.TENSOR_PYTHON_ATTRIBUTES or node.attr in torch_api.TENSOR_TENSOR_ATTRIBUTES:
        return None  # a tensor's, where the receiver is one (no other common object has it with an effect)
    return (
        f"a branch reads `{ast.unparse(node)}` of an object graphmend does not know: a getter may run code or raise "
        "(AttributeError where the object lacks it), and the rewrite reads it on every call"
    )


def _integer(part: ast.expr) -> bool:
    """An integer index (`0`, `-1`), not a slice, `None` or `...`."""
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
        part = part.operand
    return isinstance(part, ast.Constant) and type(part.value) is int


def _transpose_caveat(node: ast.Attribute, analysis: FunctionAnalysis) -> str | None:
    """The hazard of reading `x.T` where graphmend cannot tell `x` has 2 dimensions (issue 67,
    review 5: a 3-d tensor's `.T` warned on every call after the rewrite)."""
    if analysis.is_self(node.value) or not (
        analysis.kind(node.value).is_tensor or analysis.kind(node.value) is Kind.UNKNOWN
    ):
        return None
    return (
        f"a branch reads `{ast.unparse(node)}`, which warns (deprecated) on a tensor of other than 2 dimensions, an "
        "error under warnings-as-errors: graphmend does not know its dimensions, and the rewrite reads it on every call"
    )


def function_impurity(function: FunctionInfo, analysis: FunctionAnalysis) -> str | None:
    """Why running `function` is not free of effects (None: it is), by this same table applied to
    its body. Computed once per function and module."""
    return function_verdict(function, analysis)[0]


def function_verdict(function: FunctionInfo, analysis: FunctionAnalysis) -> tuple[str | None, str | None]:
    """(why running `function` is not free of effects, or None; a caveat when it is: see
    `call_caveat`), by this table applied to its body. Computed once per function and module."""
    summaries = _SUMMARIES.setdefault(analysis.module, {})
    key = id(function.node)
    if key in summaries:
        return summaries[key]
    summaries[key] = (_IN_PROGRESS, None)
    inner = FunctionAnalysis(analysis.module, function)
    inner.run()  # the kinds of its names at its end are enough for the calls it makes
    verdict = _body_impurity(function, inner)
    summaries[key] = verdict
    return verdict


def _argument_checks(function: FunctionInfo, analysis: FunctionAnalysis) -> list[ast.Raise]:
    """`raise` statements that are the whole body of an `if` testing only the function's
    parameters, with no tensor among them (`if config is not None and kwargs: raise ValueError`):
    whether they raise depends only on how the function is called, not on data."""
    args = function.node.args
    parameters = function.parameter_names | {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    found: list[ast.Raise] = []
    for node in _own_nodes(function.node):
        if not (isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Raise)):
            continue
        read = {n.id for n in walk(node.test) if isinstance(n, ast.Name)}
        if (
            all(name in parameters or analysis.is_builtin(name) for name in read)
            and not any(analysis.name_kind(name).is_tensor for name in read & parameters)
            and not analysis.is_data_dependent(node.test)
        ):
            found.append(node.body[0])
    return found


# Decorators that leave a function's call what its body does (`torch.compile` compiles the same body).
_TRANSPARENT_DECORATORS = frozenset({"staticmethod", "classmethod", "property", "torch.compile"})


def _body_impurity(function: FunctionInfo, analysis: FunctionAnalysis) -> tuple[str | None, str | None]:
    for decorator in function.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = analysis.qualified_name(target) or dotted(target) or ast.unparse(target)
        if name not in _TRANSPARENT_DECORATORS:  # a wrapper may print, count or time each call (review 11)
            return (
                f"a branch is decorated with `{ast.unparse(decorator)}`, whose wrapper may run code around it",
                None,
            )
    parameters = function.parameter_names
    fresh = _fresh_locals(function, analysis, parameters)
    checks = _argument_checks(function, analysis)
    in_checks = {id(inner) for check in checks for inner in walk(check)}  # each `raise` and its message
    caveat: str | None = None
    if checks:  # kept only when nothing else makes the function impure
        caveat = f"`{function.name}` raises on bad arguments (its argument checks), and now runs where the original did not call it"
    for node in _own_nodes(function.node):
        if id(node) in in_checks:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return "a branch rebinds a global name", None
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return f"a branch has `{type(node).__name__.lower()}`", None
        if isinstance(node, (ast.Raise, ast.Assert)):
            return "a branch may raise where the original would not have run", None
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = _base_name(node)
            if base is None or base not in fresh:
                return f"a branch stores to `{ast.unparse(node)}`", None
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in parameters:
            if analysis.kind(node.target).is_tensor or analysis.has_tensor_evidence(node.target.id):
                return f"a branch changes the argument `{node.target.id}` in place", None
        if isinstance(node, ast.Call):
            func = node.func
            if is_message(node, analysis):
                return "a branch writes a message (print, logging, warnings)", None
            if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_"):
                base = _base_name(func.value)
                if base is not None and base in fresh and isinstance(func.value, ast.Name):
                    continue  # in place on a tensor the function made itself (not an item of a list it made,
                    # which may be an argument: `L = [x]; L[0].add_(1)`, review 12)
                return f"a branch changes a tensor in place (`.{func.attr}`)", None
            reason = call_impurity(node, analysis)
            if reason is not None:
                return reason, None
            caveat = caveat or call_caveat(node, analysis)
    return None, caveat


def _own_nodes(function: ast.AST):  # noqa: ANN202
    """Every node of a function's body, not descending into nested functions, classes or lambdas."""
    stack = list(child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(child_nodes(node))


def _fresh_locals(function: FunctionInfo, analysis: FunctionAnalysis, parameters: frozenset[str]) -> set[str]:
    """Locals that only ever hold values the function created (no argument, attribute or view of
    one): changing them in place changes nothing outside."""
    values: dict[str, list[ast.expr | None]] = {}
    for node in _own_nodes(function.node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
                else:
                    for element in walk(target):
                        if isinstance(element, ast.Name) and isinstance(element.ctx, ast.Store):
                            values.setdefault(element.id, []).append(None)
        elif isinstance(
            node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)
        ):
            targets = (
                [node.target]
                if isinstance(node, (ast.For, ast.AsyncFor, ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
                else [i.optional_vars for i in node.items if i.optional_vars is not None]
            )
            for target in targets:
                for element in walk(target):
                    if isinstance(element, ast.Name):
                        values.setdefault(element.id, []).append(
                            None if not isinstance(node, ast.AugAssign) else node.value
                        )
    return {
        name
        for name, assigned in values.items()
        if name not in parameters and all(v is not None and _creates(v, analysis) for v in assigned)
    }


def _creates(value: ast.expr, analysis: FunctionAnalysis) -> bool:
    """A new tensor or container, never an alias of an existing one."""
    if isinstance(
        value, (ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp, ast.Constant)
    ):
        return True
    if isinstance(value, ast.Call):
        qualname = analysis.qualified_name(value.func)
        if qualname is not None:
            return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] not in _ALIASING_METHODS
        func = value.func
        return isinstance(func, ast.Attribute) and (func.attr == "clone" or func.attr.startswith("new_"))
    return False


def _base_name(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None
