"""What a name or a `self.` attribute holds: an instance of a same-file class, or of an imported
name (the project decides whether it is a class), following lexical scoping; and the qualified
name of an expression rooted in an import."""

from __future__ import annotations

import ast
import sys

from ..semantics import ClassInfo, FunctionInfo, ModuleIndex, attribute_chain
from .scope_facts import ScopeFacts

# nn.Module methods that return the module itself: `torch.compile(Model().cuda())` compiles a `Model`.
_RETURNS_SELF = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "eval",
        "train",
        "half",
        "float",
        "double",
        "bfloat16",
        "type",
        "requires_grad_",
        "share_memory",
        "to_empty",
        "xpu",
        "mps",
        "ipu",
    }
)
_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
# Roots of qualified names that never name code of the project (the standard library, torch).
_NOT_PROJECT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "builtins"}


def may_be_project_name(qualname: str) -> bool:
    """Whether a qualified name may name code of the project (or of a library it calls)."""
    return qualname.lstrip(".").split(".", 1)[0] not in _NOT_PROJECT


def qualified(index: ModuleIndex, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
    """The qualified name of `expr` when its root name is an import, following lexical
    scoping (a local import counts, a local variable of the same name hides the import)."""
    chain = attribute_chain(expr)
    if chain is None:
        return None
    current = scope
    while current is not None:
        if chain[0] in current.local_names:
            if chain[0] in current.local_imports:
                return index.qualified_name(expr, local_imports=current.local_imports)
            return None
        current = current.parent
    return index.qualified_name(expr)


class Instances:
    """Instance tracking of one module, cached per scope and per class."""

    def __init__(self, index: ModuleIndex, facts: ScopeFacts) -> None:
        self.index = index
        self.facts = facts
        self._instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._attribute_instances: dict[int, dict[str, ClassInfo | str]] = {}
        self._sequence_attributes: dict[int, dict[str, list[ClassInfo | str]]] = {}

    def instance_class(self, expr: ast.expr, scope: FunctionInfo | None) -> ClassInfo | None:
        """The same-file class of `Model()` or of a variable/attribute assigned `Model(...)`."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, ClassInfo) else None

    def imported_instance(self, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
        """The qualified name of the imported class of `Block()` or of a variable/attribute assigned
        `Block(...)`, when `Block` comes from an import (the project decides whether it is a class)."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, str) else None

    def constructed_class(self, func: ast.expr, scope: FunctionInfo | None) -> ClassInfo | None:
        """The same-file class calling `func` constructs (`Block(...)`), if it names one."""
        found = self._constructed(func, scope)
        return found if isinstance(found, ClassInfo) else None

    def _instance_of(self, expr: ast.expr, scope: FunctionInfo | None) -> ClassInfo | str | None:
        if isinstance(expr, ast.Call):
            func = expr.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in _RETURNS_SELF
                and isinstance(func.value, (ast.Call, ast.Name))
            ):
                found = self._instance_of(func.value, scope)  # `Model().cuda()`, `model.to(device).eval()`
                if found is not None:
                    return found
            return self._constructed(func, scope)
        if isinstance(expr, ast.Name):
            current = scope
            while current is not None:
                if expr.id in current.local_names:
                    return self._scope_instances(current).get(expr.id)
                current = current.parent
            return self._scope_instances(None).get(expr.id)
        if isinstance(expr, ast.Attribute) and scope is not None and scope.owner is not None:
            if scope.is_self(expr.value):
                return self.class_attribute_instances(scope.owner).get(expr.attr)
        return None

    def _constructed(self, func: ast.expr, scope: FunctionInfo | None) -> ClassInfo | str | None:
        """What calling `func` constructs: a same-file class, or an imported name (a class or not)."""
        shadowed = scope.local_names if scope is not None else frozenset()
        if isinstance(func, ast.Name) and func.id not in shadowed and func.id in self.index.classes:
            return self.index.classes[func.id]
        qualname = qualified(self.index, func, scope)
        return qualname if qualname is not None and may_be_project_name(qualname) else None

    def _scope_instances(self, scope: FunctionInfo | None) -> dict[str, ClassInfo | str]:
        key = id(scope.node) if scope else 0
        if key not in self._instances:
            found: dict[str, ClassInfo | str] = {}
            self._instances[key] = (
                found  # `m = m.to(device)` asks while the table is built: it sees what is found so far
            )
            for node in self.facts.assignments(scope):
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    constructed = self._instance_of(node.value, scope)
                    if constructed is not None:
                        found[node.targets[0].id] = constructed
            self._instances[key] = found
        return self._instances[key]

    def class_attribute_instances(self, cls: ClassInfo) -> dict[str, ClassInfo | str]:
        """`self.block = Block(...)` in any method → {"block": Block} (a qualified name when
        `Block` is imported)."""
        if id(cls.node) not in self._attribute_instances:
            found: dict[str, ClassInfo | str] = {}
            self._attribute_instances[id(cls.node)] = found
            for method in cls.methods.values():
                for node in self.facts.assignments(method):
                    constructed = self._constructed(node.value.func, method)  # type: ignore[attr-defined]
                    for target in node.targets:
                        if (
                            constructed is not None
                            and isinstance(target, ast.Attribute)
                            and method.is_self(target.value)
                        ):
                            found[target.attr] = constructed
        return self._attribute_instances[id(cls.node)]

    def sequence_members(self, call: ast.Call, scope: FunctionInfo) -> list[ClassInfo | str]:
        """`self.layers(x)` where `self.layers = nn.Sequential(A(...), B(...))`: the classes of the
        modules it runs, in order (calling a Sequential calls each of them)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and scope.owner is not None and scope.is_self(func.value)):
            return []
        return self._sequences(scope.owner).get(func.attr, [])

    def _sequences(self, cls: ClassInfo) -> dict[str, list[ClassInfo | str]]:
        """`self.layers = nn.Sequential(...)` in any method → {"layers": its members' classes} (the
        first such assignment of each attribute), once per class."""
        if id(cls.node) not in self._sequence_attributes:
            found: dict[str, list[ClassInfo | str]] = {}
            for method in cls.methods.values():
                for node in self.facts.assignments(method):
                    value = node.value
                    if not isinstance(value, ast.Call) or qualified(self.index, value.func, method) not in _SEQUENTIAL:
                        continue
                    members = (self._constructed(a.func, method) for a in value.args if isinstance(a, ast.Call))
                    classes = [member for member in members if member is not None]
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and method.is_self(target.value):
                            found.setdefault(target.attr, classes)
            self._sequence_attributes[id(cls.node)] = found
        return self._sequence_attributes[id(cls.node)]
