"""The methods of this file a function calls without naming them. Python runs a class's dunder
method for a statement or an operator on its objects (`obj.x = v` runs `__setattr__`, `for _ in
obj` runs `__iter__`, `obj[i]`, `len(obj)`, `obj(...)`, `Cls(...)` runs `__init__`, `with obj`,
`in`, truth tests, operators), and Dynamo runs such a method as it runs any call it inlines: a
break inside it is a break of the compiled code, at its own line (measured on torch 2.13, issue 56).
Only objects whose class this file defines are followed; the receiver's class comes from
`Instances` (what a name or a `self.` attribute was made from) or is the method's own class."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..semantics import ClassInfo, FunctionInfo, ModuleIndex
from .instances import Instances
from .scope_facts import ScopeFacts

_BINARY = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.MatMult: "matmul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.LShift: "lshift",
    ast.RShift: "rshift",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}
_COMPARISONS = {
    ast.Eq: "__eq__",
    ast.NotEq: "__ne__",
    ast.Lt: "__lt__",
    ast.LtE: "__le__",
    ast.Gt: "__gt__",
    ast.GtE: "__ge__",
}
_UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
_STORES = {ast.Load: None, ast.Store: "__setattr__", ast.Del: "__delattr__"}
_ITEMS = {ast.Load: "__getitem__", ast.Store: "__setitem__", ast.Del: "__delitem__"}
# Builtins that iterate over their arguments: `enumerate(obj)` runs `obj.__iter__` (measured).
_ITERATING = frozenset({"iter", "enumerate", "zip", "list", "tuple", "sorted", "sum", "min", "max", "any", "all"})
_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)


class ImplicitCalls:
    """The dunder methods of this file each function's own body runs, per node that runs them."""

    def __init__(self, index: ModuleIndex, facts: ScopeFacts, instances: Instances) -> None:
        self.index = index
        self.facts = facts
        self.instances = instances

    def targets(self, function: FunctionInfo) -> Iterator[tuple[ast.AST, FunctionInfo]]:
        """Each node of the function's own body that runs a method implicitly, with that method."""
        for node in self.facts.nodes(function):
            for receiver, names in self._protocols(node, function):
                for cls in self.classes(receiver, function):
                    method = next((m for name in names if (m := cls.find_method(name)) is not None), None)
                    if method is not None:
                        yield node, method
            if isinstance(node, ast.Call):
                yield from ((node, method) for method in self._called(node, function))

    def _protocols(self, node: ast.AST, scope: FunctionInfo) -> Iterator[tuple[ast.expr, tuple[str, ...]]]:
        """(receiver, the methods that may run, the first its class has) for each implicit call the
        node makes; calls are `_called`'s."""
        if isinstance(node, ast.Attribute) and (store := _STORES[type(node.ctx)]) is not None:
            yield node.value, (store,)
        elif isinstance(node, ast.Subscript):
            yield node.value, (_ITEMS[type(node.ctx)],)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            yield node.iter, ("__iter__",)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                yield item.context_expr, ("__enter__",)
                yield item.context_expr, ("__exit__",)
        elif isinstance(node, ast.BinOp):
            name = _BINARY[type(node.op)]
            yield node.left, (f"__{name}__",)
            yield node.right, (f"__r{name}__",)
        elif isinstance(node, ast.UnaryOp):
            yield node.operand, ("__bool__", "__len__") if isinstance(node.op, ast.Not) else (_UNARY[type(node.op)],)
        elif isinstance(node, ast.Compare):
            for left, op, right in zip((node.left, *node.comparators), node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)):
                    yield right, ("__contains__",)
                elif type(op) in _COMPARISONS:
                    yield left, (_COMPARISONS[type(op)],)
        elif isinstance(node, _TESTED):
            yield node.test, ("__bool__", "__len__")
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                yield value, ("__bool__", "__len__")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            compares = name in ("min", "max") and len(node.args) > 1  # `max(a, b)` compares, iterates nothing
            if name in _ITERATING and node.args and not compares and self.index.is_builtin(name, scope.local_names):
                for argument in node.args if name == "zip" else node.args[:1]:
                    yield argument, ("__iter__",)
            elif name == "len" and len(node.args) == 1 and self.index.is_builtin(name, scope.local_names):
                yield node.args[0], ("__len__",)

    def _called(self, call: ast.Call, scope: FunctionInfo) -> Iterator[FunctionInfo]:
        """`obj(...)` of an object whose class is not a module (a module's call runs `forward`, which
        the call graph follows) runs `__call__`; `Cls(...)` runs `__init__`, and a dataclass's
        generated `__init__` runs `__post_init__`."""
        made = self.instances.constructed_class(call.func, scope)
        if made is not None:
            init = made.find_method("__init__")
            if init is None and any(_is_dataclass(self.index, c) for c in made.mro()):
                init = made.find_method("__post_init__")
            if init is not None:
                yield init
            return
        cls = self.instances.instance_class(call.func, scope)
        if cls is not None and not cls.is_module and (method := cls.find_method("__call__")) is not None:
            yield method

    def classes(self, receiver: ast.expr, scope: FunctionInfo) -> tuple[ClassInfo, ...]:
        """The classes of this file the receiver may be an object of: `self` in a method is one of
        its class or of a subclass of this file; another name or attribute, what it was made from."""
        owner = scope.method.owner if scope.method else None
        if owner is not None and scope.is_self(receiver):
            return (
                owner,
                *(c for c in self.index.classes.values() if c is not owner and any(base is owner for base in c.mro())),
            )
        cls = self.instances.instance_class(receiver, scope)
        return (cls,) if cls is not None else ()


def _is_dataclass(index: ModuleIndex, cls: ClassInfo) -> bool:
    return any(
        index.qualified_name(d.func if isinstance(d, ast.Call) else d) == "dataclasses.dataclass"
        for d in cls.node.decorator_list
    )
