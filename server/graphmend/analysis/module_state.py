"""What the GM4xx rules and their rewrites both read of a module's state and a function's writes:
the in-place tensor methods, the value `__init__` gives an attribute and its other bindings, what a
function binds to a name, and a name bound again to a view of its own tensor."""

from __future__ import annotations

import ast

from ..inference import FunctionAnalysis
from ..semantics import ClassInfo, FunctionInfo, ModuleIndex, self_stores, walk
from ..torch_api import VIEW_METHODS
from .purity import dotted

# In-place tensor methods whose out-of-place twin is the same name without the `_`.
OUT_OF_PLACE = frozenset(
    """
    add sub mul div true_divide floor_divide fmod remainder pow clamp clamp_min clamp_max clip neg abs exp
    log log1p sqrt rsqrt relu sigmoid tanh floor ceil round trunc sign masked_fill masked_scatter
    index_fill index_add index_copy scatter scatter_add addcmul addcdiv lerp
    """.split()
)
# In-place methods that change a tensor's values (a `_` suffix that is not a data change, such as
# `requires_grad_` or `share_memory_`, is not one).
IN_PLACE_METHODS = frozenset(
    {f"{name}_" for name in OUT_OF_PLACE}
    | {
        "copy_",
        "fill_",
        "zero_",
        "index_put_",
        "normal_",
        "uniform_",
        "bernoulli_",
        "random_",
        "exponential_",
        "unsqueeze_",
        "squeeze_",
        "transpose_",
        "t_",
        "resize_",
        "set_",
        "put_",
    }
)


def module_class(analysis: FunctionAnalysis) -> ClassInfo | None:
    """The nn.Module class whose method (or a function nested in one) `analysis` walks."""
    cls = analysis.owner
    return cls if cls is not None and cls.is_module else None


def init_value(attribute: str, analysis: FunctionAnalysis) -> tuple[ClassInfo, FunctionInfo, ast.expr] | None:
    """The module class, its `__init__` and the value when `__init__` sets `self.<attribute>` by
    one plain assignment (`module_class`, `ModuleAnalysis.init_values`)."""
    cls = module_class(analysis)
    values = analysis.module.init_values(cls).get(attribute) if cls is not None else None
    if cls is None or not values or len(values) != 1 or values[0][1] is None:
        return None
    init, value = values[0]
    return cls, init, value  # type: ignore[return-value]


def stores_besides(cls: ClassInfo, init: FunctionInfo, value: ast.expr, attribute: str) -> list[ast.expr]:
    """The bindings of `self.<attribute>` in the class other than `__init__`'s `self.<attribute> = value`."""
    assign = statement_of(init, value)
    own = {id(target) for target in assign.targets} if assign is not None else set()
    return [node for _, node in self_stores(cls, attribute) if id(node) not in own]


def statement_of(init: FunctionInfo, value: ast.expr) -> ast.Assign | None:
    return next((n for n in walk(init.node) if isinstance(n, ast.Assign) and n.value is value), None)


def assigned_values(name: str, analysis: FunctionAnalysis) -> list[ast.expr]:
    """What the walked function's own body binds to `name` (`CompiledRegions.assigned_values`:
    a binding other than `name = value` is an unknown value)."""
    assert analysis.function is not None
    return analysis.module.regions.assigned_values(analysis.function).get(name, [])


# Those of VIEW_METHODS that always return a view of the whole tensor (`reshape` and `flatten` may copy;
# `split`, `chunk` and `unbind` return several).
ALWAYS_VIEWS = VIEW_METHODS - {"reshape", "reshape_as", "flatten", "split", "chunk", "unbind"}


def holds(expr: ast.expr, name: str, views: frozenset[str] = VIEW_METHODS, subscripts: bool = True) -> bool:
    """`expr` is `name` itself or a view of it (`name[0]`, `name.view(-1)`, `name.T`)."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id == name
        if isinstance(expr, ast.Subscript) and subscripts:
            expr = expr.value
        elif isinstance(expr, ast.Attribute) and expr.attr in views:
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in views:
            expr = expr.func.value
        else:
            return False


def rebinds_to_view(node: ast.AST, name: str) -> bool:
    """`x = x.squeeze(-1)`: `name` bound again to a view of its own tensor, so an in-place change
    after it still reaches the caller's tensor (Splinter's `start_positions.clamp_` after a squeeze)."""
    return (
        isinstance(node, ast.Assign)
        and all(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        and holds(node.value, name, ALWAYS_VIEWS, subscripts=False)
        and not isinstance(node.value, ast.Name)
    )


def annotated_as(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, optional: bool = False) -> str | None:
    """The plain name a parameter of `function` is annotated with (`int`, `Phi3Config`), else None;
    with `optional`, also inside `Optional[...]` or `... | None` (`config: Optional[BartConfig] = None`)."""
    arguments = function.args
    parameter = next(
        (a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs) if a.arg == name), None
    )
    annotation = parameter.annotation if parameter is not None else None
    if optional and isinstance(annotation, ast.Subscript) and _plain_name(annotation.value) == "Optional":
        annotation = annotation.slice
    if optional and isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        others = [side for side in sides if not (isinstance(side, ast.Constant) and side.value is None)]
        annotation = others[0] if len(others) == 1 else None
    return annotation.id if isinstance(annotation, ast.Name) else None


def _plain_name(node: ast.expr) -> str | None:
    """`Optional` for `Optional` and `typing.Optional`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def holds_a_configuration(node: ast.Attribute, analysis: FunctionAnalysis, optional: bool = False) -> bool:
    """`self.config` where `__init__` stores a parameter annotated with a `...Config` class, or of a
    transformers `PreTrainedModel`: a model's configuration, whose fields are JSON values, never
    tensors, and which TorchScript cannot type ("failed to convert Python type"). With `optional`,
    also one annotated `Optional[...Config]` (None or a configuration: never a tensor, but None
    TorchScript can type)."""
    function = analysis.function
    method = function.method if function is not None else None
    if method is None or method.owner is None or not analysis.is_self(node.value):
        return False
    if node.attr == "config" and any(
        (name or "").lstrip(".").endswith("modeling_utils.PreTrainedModel")
        for cls in method.owner.mro()
        for name in cls.base_names
    ):
        return True  # transformers' PreTrainedModel stores its configuration as `self.config`
    return any(
        isinstance(value, ast.Name) and (annotated_as(init.node, value.id, optional) or "").endswith("Config")
        for init, value in analysis.module.init_values(method.owner).get(node.attr, [])
    )


# Decorators under which a method runs without recording autograd: an inference tensor it reads is
# never saved for backward there.
_GRAD_FREE = frozenset(
    f"{prefix}.{name}"
    for prefix in ("torch", "torch.autograd", "torch.autograd.grad_mode")
    for name in ("no_grad", "inference_mode")
)


def read_only_without_grad(attribute: str, owner: ClassInfo, index: ModuleIndex) -> bool:
    """Whether `self.<attribute>` of `owner` may hold an inference tensor without anyone noticing:
    it is out of the state dict (registered with `persistent=False`, or a plain attribute, never a
    parameter), never changed in place, never handed out as it is (returned), and read only by
    methods that run without grad: decorated `@torch.no_grad()`/`@torch.inference_mode()`, or
    called through `self.` only from such methods, in the class and its subclasses in the file.
    Transformers' rotary embeddings: `inv_freq` (a non-persistent buffer), `attention_scaling` and
    `max_seq_len_cached`, read only by the `@torch.no_grad()` forward and the update it calls."""
    family = [cls for cls in index.classes.values() if any(base is owner for base in cls.mro())]
    methods = {id(m.node): m for cls in family for m in cls.methods.values()}
    readers: list[FunctionInfo] = []
    for method in methods.values():
        touches = [_touches(node, attribute) for node in walk(method.node)]
        if False in touches:
            return False  # registered persistent, a parameter, changed in place, handed out
        if True in touches and method.name != "__init__":  # `__init__` runs before any call could store one
            readers.append(method)
    others = [
        node
        for cls in index.classes.values()
        if cls not in family
        for m in cls.methods.values()
        for node in walk(m.node)
        if isinstance(node, ast.Attribute)
        and node.attr == attribute
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    if others:
        return False  # another class reads one of that name on an object: perhaps this one, on its module
    callers = {key: [c for c in methods.values() if _calls_on_self(c, m.name)] for key, m in methods.items()}
    grad_free = {
        key
        for key, m in methods.items()
        if any(
            index.qualified_name(d.func if isinstance(d, ast.Call) else d) in _GRAD_FREE for d in m.node.decorator_list
        )
    }
    changed = True
    while changed:  # and the methods called only from methods that run without grad
        changed = False
        for key in methods.keys() - grad_free:
            if callers[key] and all(id(c.node) in grad_free for c in callers[key]):
                grad_free.add(key)
                changed = True
    return all(id(m.node) in grad_free for m in readers)


def _touches(node: ast.AST, attribute: str) -> bool | None:
    """True: `node` reads `self.<attribute>`; False: it makes the attribute part of the state dict,
    changes it in place, hands it out as it is or reads it on another object; None: neither."""
    if isinstance(node, ast.Attribute) and node.attr == attribute:
        if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return False  # `self.rotary_emb.inv_freq`: read where this check does not look
        return True if isinstance(node.ctx, ast.Load) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method, receiver = node.func.attr, node.func.value
        if method in ("register_buffer", "register_parameter") and _names(node, attribute):
            persistent = next((k.value for k in node.keywords if k.arg == "persistent"), None)
            return None if method == "register_buffer" and _is_false(persistent) else False
        if method.endswith("_") and _is_self_attribute(receiver, attribute):
            return False  # in place: an inference tensor raises outside inference mode
    if isinstance(node, ast.AugAssign) and _is_self_attribute(node.target, attribute):
        return False
    if isinstance(node, ast.Assign) and any(_is_self_attribute(t, attribute) for t in node.targets):
        value = node.value
        if isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] == "Parameter":
            return False
    if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if any(_is_self_attribute(v, attribute) for v in values):
            return False
    return None


def _names(call: ast.Call, attribute: str) -> bool:
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Constant) and first.value == attribute


def _is_false(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is False


def _is_self_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _calls_on_self(method: FunctionInfo, name: str) -> bool:
    """Whether `method` calls `self.<name>(...)`."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
        for node in walk(method.node)
    )
