"""The kinds a function's parameters start with: annotations, defaults, how the body uses them
(`x.sum()` makes `x` a tensor), what compiled callers in this file or others pass, and the
literal defaults of parameters no call passes."""

from __future__ import annotations

import ast
from functools import cached_property

from .. import torch_api
from ..kinds import TENSORISH, Env, Kind, join
from ..regions import bound_names
from ..semantics import FunctionInfo, walk
from .expressions import torch_call_kind
from .scope import Scope

_CONTAINER_ANNOTATIONS = frozenset(
    "dict list tuple set frozenset typing.Dict typing.List typing.Tuple typing.Set typing.FrozenSet typing.Sequence "
    "typing.Mapping typing.Iterable collections.abc.Sequence collections.abc.Mapping collections.abc.Iterable".split()
)
_TENSOR_ANNOTATIONS = frozenset(
    "torch.Tensor torch.FloatTensor torch.LongTensor torch.DoubleTensor torch.HalfTensor torch.IntTensor "
    "torch.ByteTensor torch.nn.Parameter torch.nn.parameter.Parameter".split()
)
_PYTHON_ANNOTATIONS = frozenset("bool int float str complex bytes".split())
# NumPy arrays: a parameter so annotated is an array however the body uses it (`.max()`, `.shape`
# are tensor-like too), so a rewrite never gives it a tensor-only method.
_NUMPY_ANNOTATIONS = frozenset("numpy.ndarray numpy.typing.NDArray".split())
_MAPPING_ANNOTATIONS = frozenset(
    "typing.Dict typing.Mapping typing.MutableMapping collections.abc.Mapping collections.abc.MutableMapping".split()
)


def parameters_with_defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """Each named parameter (positional ones first, then keyword-only) with its default, or None."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]


class ParameterKinds:
    """Parameter kinds and the evidence of tensor use they come from."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.function = scope.function
        # Parameters that are tensors only because some caller passes a tensor (a compiled caller in
        # another file, or a call of this file that runs the compiled function; others may pass
        # numbers) → their annotation ("" for none): a rewrite of a test of one must keep working
        # for a Python value too.
        self.caller_typed: dict[str, str] = {}
        # Parameters that are tensors only by their annotation: nothing in the body uses them as one
        # (kornia passes a `torch.Size` where the annotation says `torch.Tensor`) → their annotation.
        self.annotation_typed: dict[str, str] = {}

    def initial_env(self) -> Env:
        """The kinds the parameters (and `self`) have where the body starts; fills `caller_typed`
        and `annotation_typed`."""
        assert self.function is not None
        module = self.scope.module
        args = self.function.node.args
        env: Env = {}
        pairs = parameters_with_defaults(args)
        evidence = self.tensor_evidence if pairs else {}
        given = module.regions.context.parameters_given_tensors(self.function.qualname)
        given |= module.entry_tensor_parameters(self.function)  # this file's calls of it as a compiled frame
        numpy_given = module.numpy_parameters(self.function) if module.imports_numpy else frozenset()
        for arg, default in pairs:
            kind = self._parameter_kind(arg, default, evidence)
            if kind is Kind.UNKNOWN and arg.arg in numpy_given:
                kind = Kind.NUMPY
            if arg.arg in given and not kind.is_tensor:
                optional = isinstance(default, ast.Constant) and default.value is None
                kind = Kind.OPTIONAL_TENSOR if optional else Kind.TENSOR
                self.caller_typed[arg.arg] = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            env[arg.arg] = kind
        for star in (args.vararg, args.kwarg):
            if star is not None:
                env[star.arg] = Kind.CONTAINER
        if self.scope.self_name and self.function.owner is not None:
            env[self.scope.self_name] = Kind.SELF
        return env

    def kept_defaults(self) -> dict[str, object]:
        """Parameters no call in the project passes (a library function reached only through the
        project's calls, `ProjectContext.unpassed_parameters`) → their literal defaults. A
        parameter rebound in a loop is left out: the walk sees a loop body before its rebinding."""
        assert self.function is not None
        unpassed = self.scope.module.regions.context.parameters_unpassed(self.function.qualname)
        if not unpassed:
            return {}
        in_loops = {
            name
            for loop in walk(self.function.node)
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While))
            for stmt in loop.body
            for name in bound_names(stmt)
        }
        return {
            arg.arg: default.value
            for arg, default in parameters_with_defaults(self.function.node.args)
            if arg.arg in unpassed
            and arg.arg not in in_loops
            and isinstance(default, ast.Constant)
            and isinstance(default.value, (str, int, float, bool, type(None)))
        }

    def _parameter_kind(self, arg: ast.arg, default: ast.expr | None, evidence: dict[str, Kind]) -> Kind:
        if arg.annotation is not None:
            kind = annotation_kind(arg.annotation, self.scope)
            if kind.is_tensor and evidence.get(arg.arg) is not Kind.TENSOR:
                self.annotation_typed[arg.arg] = ast.unparse(arg.annotation)
            if kind is not Kind.UNKNOWN:
                if isinstance(default, ast.Constant) and default.value is None and kind.is_tensor:
                    return join(kind, Kind.NONE)
                return kind
        if isinstance(default, ast.Constant):
            if default.value is None:
                return Kind.OPTIONAL_TENSOR if arg.arg in evidence else Kind.NONE
            return Kind.PYTHON
        return evidence.get(arg.arg, Kind.UNKNOWN)

    def maps_to_tensors(self, name: str) -> bool:
        """A parameter annotated as a mapping to tensors, never rebound (`_tensor_mappings`)."""
        return name in self._tensor_mappings

    @cached_property
    def _tensor_mappings(self) -> frozenset[str]:
        """Parameters annotated `Dict[str, Tensor]` (`dict`, `Mapping`...) that the function rebinds
        only to what a method of its class annotated so returns (kornia's augmentation `params`, and
        `params, flags = self._process_kwargs_to_params_and_flags(params, flags)`): a value looked
        up in one is a tensor."""
        if self.function is None:
            return frozenset()
        args = self.function.node.args
        found = {
            arg.arg
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)
            if arg.annotation is not None and self._maps_to_tensors(arg.annotation)
        }
        if not found:
            return frozenset()
        kept: set[int] = set()  # the targets a method's annotated return rebinds to tensor mappings
        for node in walk(self.function.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                kept.update(self._returned_tensor_mappings(node.targets[0], node.value))
        rebound = {
            n.id
            for n in walk(self.function.node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in kept
        }
        return frozenset(found - rebound)

    def _returned_tensor_mappings(self, target: ast.expr, value: ast.expr) -> list[int]:
        """The name nodes of `target` that `value`, a call of a method of this class, binds to a
        mapping to tensors by its return annotation (`-> Tuple[Dict[str, Tensor], Dict[str, Any]]`)."""
        method = self._own_method(value.func) if isinstance(value, ast.Call) else None
        returns = method.node.returns if method is not None else None
        if returns is None:
            return []
        if isinstance(target, ast.Name):
            return [id(target)] if self._maps_to_tensors(returns) else []
        if not (isinstance(target, ast.Tuple) and isinstance(returns, ast.Subscript)):
            return []
        origin = returns.value
        is_tuple = self.scope.qualified_name(origin) == "typing.Tuple" or (
            isinstance(origin, ast.Name) and origin.id == "tuple" and self.scope.index.is_builtin("tuple")
        )
        elements = returns.slice.elts if isinstance(returns.slice, ast.Tuple) else []
        if not is_tuple or len(elements) != len(target.elts):
            return []
        return [
            id(name)
            for name, annotation in zip(target.elts, elements)
            if isinstance(name, ast.Name) and self._maps_to_tensors(annotation)
        ]

    def _own_method(self, func: ast.expr) -> FunctionInfo | None:
        """`self.name` → the method of this function's class (or a same-file base) it calls."""
        owner = self.function.owner if self.function is not None else None
        if owner is None or not isinstance(func, ast.Attribute) or not self.scope.is_self(func.value):
            return None
        return owner.find_method(func.attr)

    def _maps_to_tensors(self, annotation: ast.expr) -> bool:
        return (
            isinstance(annotation, ast.Subscript)
            and self._is_mapping(annotation.value)
            and isinstance(annotation.slice, ast.Tuple)
            and len(annotation.slice.elts) == 2
            and annotation_kind(annotation.slice.elts[1], self.scope) is Kind.TENSOR
        )

    def _is_mapping(self, origin: ast.expr) -> bool:
        if isinstance(origin, ast.Name) and origin.id == "dict" and self.scope.index.is_builtin("dict"):
            return True
        return self.scope.qualified_name(origin) in _MAPPING_ANNOTATIONS

    @cached_property
    def tensor_evidence(self) -> dict[str, Kind]:
        """Names used as tensors: `x.sum()`, `x.shape`, `torch.relu(x)` → TENSOR.

        Use through a subscript (`x[0].item()`) is weaker evidence, since `x` may be a tuple of
        tensors: such names get OPTIONAL_TENSOR, whose own truthiness is never flagged.
        `h = x * 2` then `h.sum()` carries the evidence back to `x` (only a tensor x makes h one).
        """
        assert self.function is not None
        found: dict[str, Kind] = {}

        def note(name: str, kind: Kind) -> bool:
            if found.get(name) is Kind.TENSOR or found.get(name) is kind:
                return False
            found[name] = kind
            return True

        derived: list[tuple[str, str, bool]] = []  # (local, the name it comes from, through a subscript)
        for node in walk(self.function.node):
            if isinstance(node, ast.Attribute) and node.attr in torch_api.TENSOR_EVIDENCE:
                base = _subscript_base(node.value)
                if isinstance(base, ast.Name):
                    note(base.id, Kind.TENSOR if base is node.value else Kind.OPTIONAL_TENSOR)
            elif isinstance(node, ast.Call) and node.args:
                qualname = self.scope.qualified_name(node.func)
                if (
                    qualname is not None
                    and torch_call_kind(qualname) in TENSORISH
                    and qualname.rsplit(".", 1)[-1] not in torch_api.FACTORY_FUNCTIONS
                ):
                    # torch.relu(x), torch.any(x > 0): only a tensor x makes the call valid.
                    source = _sole_variable(node.args[0])
                    if source is not None:
                        note(source[0], Kind.OPTIONAL_TENSOR if source[1] else Kind.TENSOR)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                source = _sole_variable(node.value)
                if source is not None:
                    derived.append((node.targets[0].id, *source))
        changed = True
        while changed:
            changed = False
            for local, origin, through_subscript in derived:
                if local in found:
                    strength = Kind.OPTIONAL_TENSOR if through_subscript else found[local]
                    changed |= note(origin, strength)
        return found

    def has_tensor_evidence(self, name: str) -> bool:
        """The function uses `name` itself as a tensor (`name.sum()`, `torch.relu(name)`)."""
        return self.function is not None and self.tensor_evidence.get(name) is Kind.TENSOR


def annotation_kind(annotation: ast.expr, scope: Scope) -> Kind:
    """What an annotation says a value is (UNKNOWN where it says nothing graphmend uses)."""
    if isinstance(annotation, ast.Name) and annotation.id in _PYTHON_ANNOTATIONS:
        return Kind.PYTHON if scope.index.is_builtin(annotation.id) else Kind.UNKNOWN
    if (
        isinstance(annotation, ast.Name)
        and annotation.id in _CONTAINER_ANNOTATIONS
        and scope.index.is_builtin(annotation.id)
    ):
        return Kind.CONTAINER
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return Kind.NONE
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return join(annotation_kind(annotation.left, scope), annotation_kind(annotation.right, scope))
    if isinstance(annotation, ast.Subscript):
        origin = scope.qualified_name(annotation.value)
        inner = annotation.slice
        if origin in _NUMPY_ANNOTATIONS:
            return Kind.NUMPY  # `npt.NDArray[np.float32]`
        if origin in ("typing.Optional", "typing_extensions.Optional"):
            return join(annotation_kind(inner, scope), Kind.NONE)
        if origin in ("typing.Union", "typing_extensions.Union") and isinstance(inner, ast.Tuple):
            kinds = [annotation_kind(e, scope) for e in inner.elts]
            result = kinds[0]
            for kind in kinds[1:]:
                result = join(result, kind)
            return result
        if origin in _CONTAINER_ANNOTATIONS or (
            isinstance(annotation.value, ast.Name)
            and annotation.value.id in _CONTAINER_ANNOTATIONS
            and scope.index.is_builtin(annotation.value.id)
        ):
            return Kind.CONTAINER
        return Kind.UNKNOWN
    qualname = scope.qualified_name(annotation)
    if qualname in _CONTAINER_ANNOTATIONS:
        return Kind.CONTAINER
    if qualname in _TENSOR_ANNOTATIONS:
        return Kind.TENSOR
    if qualname == "torch.BoolTensor":
        return Kind.BOOL_TENSOR
    if qualname in _NUMPY_ANNOTATIONS:
        return Kind.NUMPY
    return Kind.UNKNOWN


def _subscript_base(expr: ast.expr) -> ast.expr:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def _sole_variable(expr: ast.expr, through_subscript: bool = False) -> tuple[str, bool] | None:
    """The one name in `x * 2`, `-x`, `x[0]`, `(x - 0.5) / 2` (everything else a literal), and
    whether it is reached through a subscript."""
    if isinstance(expr, ast.Name):
        return expr.id, through_subscript
    if isinstance(expr, ast.Subscript):
        return _sole_variable(expr.value, True)
    if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
        return _sole_variable(expr.operand, through_subscript)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.right, ast.Constant):
            return _sole_variable(expr.left, through_subscript)
        if isinstance(expr.left, ast.Constant):
            return _sole_variable(expr.right, through_subscript)
    if isinstance(expr, ast.Compare) and len(expr.comparators) == 1:
        if isinstance(expr.comparators[0], ast.Constant):
            return _sole_variable(expr.left, through_subscript)
        if isinstance(expr.left, ast.Constant):
            return _sole_variable(expr.comparators[0], through_subscript)
    return None
