"""The kinds of a function's names in force at the point the walk has reached, and the kind of
one expression given them: calls of torch and NumPy, tensor methods and attributes, operators,
comparisons, same-file calls (their return kinds)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from .. import torch_api
from ..kinds import Env, Kind, join
from .scope import Scope

_PYTHON_BUILTINS = frozenset(
    "len isinstance issubclass hasattr callable str repr type id range hash format chr ord divmod".split()
)
_CONTAINER_BUILTINS = frozenset("list tuple dict set frozenset zip enumerate sorted reversed map filter".split())
_STDLIB_LOGGER_FACTORIES = frozenset({"logging.getLogger", "logging.getLoggerClass"})


def is_logger_factory(qualname: str | None) -> bool:
    if qualname is None:
        return False
    if qualname in _STDLIB_LOGGER_FACTORIES or qualname in torch_api.LIBRARY_LOGGER_FACTORIES:
        return True
    # `from ...utils import logging` inside transformers when the package could not be located.
    return qualname.startswith(".") and qualname.lstrip(".").endswith("utils.logging.get_logger")


# Attributes every Python object or class has, none of them a tensor.
_TYPE_ATTRIBUTES = frozenset({"__class__", "__name__", "__qualname__", "__module__", "__doc__"})


class ExpressionKinds:
    """The names' kinds in force (`env`) and `kind(expr)`, remembered per expression until a
    name's kind changes."""

    def __init__(self, scope: Scope, maps_to_tensors: Callable[[str], bool]) -> None:
        self.scope = scope
        self.module = scope.module
        self.function = scope.function
        # A parameter annotated as a mapping to tensors, never rebound (`ParameterKinds`): a value
        # looked up in it is a tensor.
        self.maps_to_tensors = maps_to_tensors
        self._env: Env = {}
        self._kinds: dict[int, Kind] = {}  # id(expression) → kind, for the names' kinds in force now

    @property
    def env(self) -> Env:
        """The kinds of the names in force at the point the walk has reached."""
        return self._env

    @env.setter
    def env(self, kinds: Env) -> None:
        self._env = kinds
        self._kinds.clear()

    def forget(self) -> None:
        """A name's kind changed in `env` itself: the kinds remembered for expressions no longer hold."""
        self._kinds.clear()

    def name_kind(self, name: str) -> Kind:
        if name in self._env:
            return self._env[name]
        if name in self.scope.local_names:
            return Kind.UNKNOWN  # bound later on this path, or by something we do not track
        parent = self.function.parent if self.function else None
        while parent is not None:
            if name in parent.local_names:
                return self.module.final_env(parent).get(name, Kind.UNKNOWN)
            parent = parent.parent
        return self.module.module_env.get(name, Kind.UNKNOWN) if self.function else Kind.UNKNOWN

    def kind(self, expr: ast.expr) -> Kind:
        """The kind of `expr` with the names' kinds in force now (remembered until a name's kind
        changes: the rules ask for the same expressions again and again)."""
        known = self._kinds.get(id(expr))
        if known is None:
            known = self._kinds[id(expr)] = self._kind(expr)
        return known

    def _kind(self, expr: ast.expr) -> Kind:
        if isinstance(expr, ast.Constant):
            return Kind.NONE if expr.value is None else Kind.PYTHON
        if isinstance(expr, ast.Name):
            kind = self.name_kind(expr.id)
            if kind is Kind.UNKNOWN and expr.id not in self.scope.shadowed_names:
                qualname = self.scope.qualified_name(expr)
                return _module_value_kind(qualname) if qualname is not None else kind
            return kind
        if isinstance(expr, ast.Attribute):
            return self._attribute_kind(expr)
        if isinstance(expr, ast.Call):
            return self._call_kind(expr)
        if isinstance(expr, ast.Compare):
            return self._compare_kind(expr)
        if isinstance(expr, ast.BinOp):
            return self.binop_kind(expr)
        if isinstance(expr, ast.UnaryOp):
            operand = self.kind(expr.operand)
            if isinstance(expr.op, ast.Not):
                return Kind.PYTHON
            if isinstance(expr.op, ast.Invert) and operand.present is Kind.BOOL_TENSOR:
                return Kind.BOOL_TENSOR
            return Kind.TENSOR if operand.is_tensor else operand if operand is Kind.PYTHON else Kind.UNKNOWN
        if isinstance(expr, ast.BoolOp):
            kinds = [self.kind(v) for v in expr.values]
            return kinds[-1] if all(k is kinds[-1] for k in kinds) else Kind.UNKNOWN
        if isinstance(expr, ast.IfExp):
            return join(self.kind(expr.body), self.kind(expr.orelse))
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Call) and _as_tuple(expr.value) and self._nonzero(expr.value):
                return Kind.TENSOR  # one of the index tensors of `nonzero(..., as_tuple=True)`
            if isinstance(expr.value, ast.Name) and self.maps_to_tensors(expr.value.id):
                return Kind.TENSOR  # `params["brightness_factor"]` of `params: Dict[str, Tensor]`
            value = self.kind(expr.value)
            if value.present is Kind.BOOL_TENSOR:
                return Kind.BOOL_TENSOR  # indexing keeps the dtype: `router_mask[:, idx]` is a mask too
            if value.is_tensor:
                return Kind.TENSOR
            return value if value in (Kind.PYTHON, Kind.NUMPY) else Kind.UNKNOWN
        if isinstance(expr, ast.NamedExpr):
            return self.kind(expr.value)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)):
            return Kind.CONTAINER
        if isinstance(expr, ast.JoinedStr):
            return Kind.PYTHON
        return Kind.UNKNOWN

    def _attribute_kind(self, expr: ast.Attribute) -> Kind:
        qualname = self.scope.qualified_name(expr)
        if qualname is not None:
            return _module_value_kind(qualname)
        if expr.attr in _TYPE_ATTRIBUTES:
            return Kind.PYTHON  # `self.__class__.__name__`: a class or its name, a constant while tracing
        value = self.kind(expr.value)
        if value is Kind.SELF:
            method = self.function.method if self.function else None
            if method is None or method.owner is None:
                return Kind.UNKNOWN
            owner = method.owner
            return self.module.class_attributes(owner).get(expr.attr, Kind.UNKNOWN)
        if expr.attr in torch_api.TENSOR_PYTHON_ATTRIBUTES or value is Kind.PYTHON:
            return Kind.PYTHON  # `t.shape`, or an attribute of a Python value (`torch.finfo(t.dtype).max`)
        if value.is_tensor and expr.attr in torch_api.TENSOR_TENSOR_ATTRIBUTES:
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _compare_kind(self, expr: ast.Compare) -> Kind:
        if (
            any(isinstance(op, (ast.In, ast.NotIn)) for op in expr.ops)
            and len(expr.ops) == 1
            and _is_sequence(expr.comparators[0], self.scope)
        ):
            # `t in [1, 2]` compares the value with each item: data (measured on torch 2.13: a
            # branch on it breaks, gb0170 for a tensor, gb0033 for a NumPy number). Sets and dicts
            # hash instead (a tensor's hash is its identity), so they are left out.
            left = self.kind(expr.left)
            return Kind.BOOL_TENSOR if left.is_tensor else Kind.NUMPY if left is Kind.NUMPY else Kind.PYTHON
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
            return Kind.PYTHON
        if any(_is_non_numeric_literal(e) for e in [expr.left, *expr.comparators]):
            # A tensor compared with a string or None is never equal: Python's bool, no data read.
            return Kind.PYTHON
        kinds = [self.kind(expr.left), *(self.kind(c) for c in expr.comparators)]
        if any(k.is_tensor for k in kinds):
            return Kind.BOOL_TENSOR
        if Kind.NUMPY in kinds:
            return Kind.NUMPY  # a NumPy bool (array): traced as a tensor under compile
        return Kind.PYTHON if all(k in (Kind.PYTHON, Kind.NONE) for k in kinds) else Kind.UNKNOWN

    def binop_kind(self, expr: ast.BinOp) -> Kind:
        left, right = self.kind(expr.left), self.kind(expr.right)
        if isinstance(expr.op, ast.Mod) and (left is Kind.PYTHON or isinstance(expr.left, ast.JoinedStr)):
            return Kind.PYTHON
        if left.is_tensor or right.is_tensor:
            if isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and Kind.TENSOR not in (left, right):
                return Kind.BOOL_TENSOR
            return Kind.TENSOR
        if Kind.NUMPY in (left, right):
            return Kind.NUMPY
        if isinstance(expr.op, ast.MatMult):
            return Kind.TENSOR
        return Kind.PYTHON if left is Kind.PYTHON and right is Kind.PYTHON else Kind.UNKNOWN

    def _call_kind(self, call: ast.Call) -> Kind:
        if _as_tuple(call):
            return Kind.CONTAINER  # `torch.nonzero(m, as_tuple=True)`: a tuple of index tensors
        func = call.func
        qualname = self.scope.qualified_name(func)
        if qualname is not None:
            if is_logger_factory(qualname):
                return Kind.LOGGER
            if qualname in torch_api.IS_COMPILING_FUNCTIONS or qualname in torch_api.IS_SCRIPTING_FUNCTIONS:
                return Kind.PYTHON
            root = qualname.split(".", 1)[0]
            if root == "numpy":
                # A drawn number breaks the graph where it is drawn; after the break it is Python's.
                return Kind.PYTHON if torch_api.is_numpy_scalar_draw(qualname, call) else Kind.NUMPY
            if root == "math":
                return Kind.PYTHON
            return torch_call_kind(qualname)
        if isinstance(func, (ast.Name, ast.Attribute)) and self.kind(func) is Kind.TENSOR_MODULE:
            return Kind.TENSOR
        if isinstance(func, ast.Name):
            if self.scope.is_builtin(func.id):
                if func.id in _PYTHON_BUILTINS or func.id in torch_api.SCALAR_BUILTINS:
                    return Kind.PYTHON
                if func.id in _CONTAINER_BUILTINS:
                    return Kind.CONTAINER
                if func.id == "abs" and call.args:
                    return self.kind(call.args[0])
                return Kind.UNKNOWN
        elif isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            if receiver.is_tensor:
                if receiver.present is Kind.BOOL_TENSOR and self._keeps_dtype(call):
                    return Kind.BOOL_TENSOR  # `mask.to(x.device)`, `mask.unsqueeze(-1)`: still a mask
                return _tensor_method_kind(func.attr)
            if receiver is Kind.LOGGER:
                return Kind.PYTHON
            if receiver is Kind.NUMPY:
                # `.item()` breaks, then is Python
                return Kind.PYTHON if func.attr in torch_api.SCALAR_METHODS else Kind.NUMPY
            if (
                receiver is Kind.UNKNOWN
                and func.attr in torch_api.REDUCTION_METHODS
                and not self._is_same_file_call(call)
            ):
                return Kind.BOOL_TENSOR if func.attr in torch_api.TENSOR_BOOL_METHODS else Kind.TENSOR
            if (
                receiver is Kind.UNKNOWN
                and func.attr in _TENSOR_ONLY_CONVERSIONS
                and not call.args
                and not call.keywords
            ):
                return _TENSOR_ONLY_CONVERSIONS[func.attr]  # `router_probs.bool()`: nothing but a tensor has it
        if self.function is not None:
            regions = self.module.regions
            callee = regions.resolve_call(call, self.function) or regions.module_call_target(call, self.function)
            if callee is not None:  # a same-file function, or `self.block(x)` running Block.forward
                return self.module.return_kind(callee)
        return Kind.UNKNOWN

    def _keeps_dtype(self, call: ast.Call) -> bool:
        """A tensor method call whose result has its receiver's dtype: a dtype-keeping method with no
        argument that could be a dtype (`.to(x.device)`, `.to("cuda")` keep it; `.to(x.dtype)`,
        `.to(other)`, `.to(device)` with an unknown `device` may not)."""
        assert isinstance(call.func, ast.Attribute)
        if call.func.attr not in torch_api.DTYPE_KEEPING_METHODS:
            return False
        if call.func.attr != "to" and call.func.attr != "view":
            return True
        if any(k.arg == "dtype" for k in call.keywords):
            return False
        return all(self._names_no_dtype(arg, call.func.attr) for arg in call.args)

    def _names_no_dtype(self, arg: ast.expr, method: str) -> bool:
        if method == "view":  # sizes: ints and shapes
            return (
                self.kind(arg) is Kind.PYTHON
                and not isinstance(arg, ast.Attribute)
                and self.scope.qualified_name(arg) is None
            )
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return True  # a device name: `.to("cuda")`
        if isinstance(arg, ast.Attribute) and arg.attr == "device":
            return True
        return isinstance(arg, ast.Call) and self.scope.qualified_name(arg.func) == "torch.device"

    def _nonzero(self, call: ast.Call) -> bool:
        """`torch.nonzero(t, ...)` or `t.nonzero(...)` on a tensor."""
        func = call.func
        if self.scope.qualified_name(func) == "torch.nonzero":
            return True
        return isinstance(func, ast.Attribute) and func.attr == "nonzero" and self.kind(func.value).is_tensor

    def _is_same_file_call(self, call: ast.Call) -> bool:
        return self.function is not None and self.module.regions.resolve_call(call, self.function) is not None


# Conversions that only tensors have (not modules, which have `.float()`/`.half()`, nor NumPy).
_TENSOR_ONLY_CONVERSIONS = {"bool": Kind.BOOL_TENSOR, "long": Kind.TENSOR}


def _as_tuple(call: ast.Call) -> bool:
    return any(
        k.arg == "as_tuple" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )


def _is_non_numeric_literal(expr: ast.expr) -> bool:
    if isinstance(expr, ast.JoinedStr):
        return True
    return isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, (str, bytes)))


def _is_sequence(expr: ast.expr, scope: Scope) -> bool:
    """A list or tuple: a literal, `list(...)`/`tuple(...)`, or a local name only ever bound to one."""
    if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple"):
        return scope.is_builtin(expr.func.id)
    function = scope.function
    if isinstance(expr, ast.Name) and function is not None and expr.id not in function.parameter_names:
        values = scope.module.regions.assigned_values(function).get(expr.id, [])
        return bool(values) and all(not isinstance(v, ast.Name) and _is_sequence(v, scope) for v in values)
    return False


def torch_call_kind(qualname: str) -> Kind:
    """What a call of the torch function `qualname` returns (UNKNOWN for anything not torch's)."""
    if not qualname.startswith("torch."):
        return Kind.UNKNOWN
    if qualname.startswith(torch_api.TENSOR_NAMESPACES):
        return Kind.TENSOR
    if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return Kind.TENSOR
    if qualname.startswith("torch.nn.") and qualname.rsplit(".", 1)[-1] in torch_api.SINGLE_TENSOR_MODULES:
        return Kind.TENSOR_MODULE
    name = qualname[len("torch.") :]
    if name in torch_api.BOOL_TENSOR_FUNCTIONS:
        return Kind.BOOL_TENSOR
    if name in torch_api.TENSOR_FUNCTIONS:
        return Kind.TENSOR
    if name in torch_api.PYTHON_VALUE_FUNCTIONS:
        return Kind.PYTHON
    return Kind.UNKNOWN


def _module_value_kind(qualname: str) -> Kind:
    """An imported value: `torch.float16` is a Python object; anything else is not known."""
    if qualname.startswith("torch.") and qualname[len("torch.") :] in torch_api.PYTHON_VALUE_ATTRIBUTES:
        return Kind.PYTHON
    return Kind.UNKNOWN


def _tensor_method_kind(method: str) -> Kind:
    if method in torch_api.TENSOR_PYTHON_METHODS or method in torch_api.SCALAR_METHODS or method.startswith("is_"):
        return Kind.PYTHON
    if method in torch_api.TENSOR_FOREIGN_METHODS or method not in torch_api.TENSOR_METHODS:
        return Kind.UNKNOWN
    if method in torch_api.TENSOR_BOOL_METHODS:
        return Kind.BOOL_TENSOR
    return Kind.TENSOR
