"""What a name, an instance or a call refers to: a same-file function or class (lexical scoping,
`self.` methods and attributes, `super()`), or code of another file as an `ExternalRef`."""

from __future__ import annotations

import ast
import sys

from ..semantics import ClassInfo, FunctionInfo, attribute_chain
from .records import ExternalRef, ProjectContext
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


class CallResolution(ScopeFacts):
    """Name, instance and call resolution of one module, cached per scope and per class."""

    context: ProjectContext
    _instances: dict[int, dict[str, ClassInfo | str]]
    _attribute_instances: dict[int, dict[str, ClassInfo | str]]
    _sequence_attributes: dict[int, dict[str, list[ClassInfo | str]]]
    _attribute_functions: dict[int, dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]]

    def resolve_function_name(self, name: str, scope: FunctionInfo | None) -> FunctionInfo | None:
        """The same-file function a bare name calls, following lexical scoping."""
        current = scope
        while current is not None:
            if name in current.nested:
                return current.nested[name]
            if name in current.local_names:
                return None  # a parameter or local variable, not a function we know
            current = current.parent
        return self.index.functions.get(name)

    def _instance_class(self, expr: ast.expr, scope: FunctionInfo | None) -> ClassInfo | None:
        """The same-file class of `Model()` or of a variable/attribute assigned `Model(...)`."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, ClassInfo) else None

    def _imported_instance(self, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
        """The qualified name of the imported class of `Block()` or of a variable/attribute assigned
        `Block(...)`, when `Block` comes from an import (the project decides whether it is a class)."""
        found = self._instance_of(expr, scope)
        return found if isinstance(found, str) else None

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
        qualname = self._qualified(func, scope)
        return qualname if qualname is not None and _may_be_project_name(qualname) else None

    def _qualified(self, expr: ast.expr, scope: FunctionInfo | None) -> str | None:
        """The qualified name of `expr` when its root name is an import, following lexical
        scoping (a local import counts, a local variable of the same name hides the import)."""
        chain = attribute_chain(expr)
        if chain is None:
            return None
        current = scope
        while current is not None:
            if chain[0] in current.local_names:
                if chain[0] in current.local_imports:
                    return self.index.qualified_name(expr, local_imports=current.local_imports)
                return None
            current = current.parent
        return self.index.qualified_name(expr)

    def _scope_instances(self, scope: FunctionInfo | None) -> dict[str, ClassInfo | str]:
        key = id(scope.node) if scope else 0
        if key not in self._instances:
            found: dict[str, ClassInfo | str] = {}
            self._instances[key] = (
                found  # `m = m.to(device)` asks while the table is built: it sees what is found so far
            )
            for node in self._assignments(scope):
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
                for node in self._assignments(method):
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
                for node in self._assignments(method):
                    value = node.value
                    if not isinstance(value, ast.Call) or self._qualified(value.func, method) not in _SEQUENTIAL:
                        continue
                    members = (self._constructed(a.func, method) for a in value.args if isinstance(a, ast.Call))
                    classes = [member for member in members if member is not None]
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and method.is_self(target.value):
                            found.setdefault(target.attr, classes)
            self._sequence_attributes[id(cls.node)] = found
        return self._sequence_attributes[id(cls.node)]

    def _class_attribute_functions(
        self, cls: ClassInfo
    ) -> dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]:
        """`self.fn = TABLE[key]` (a module-level dict of functions) or `self.fn = function` in the
        class's methods → what `self.fn(...)` may run: functions of this file, or the imported
        table or function. An attribute bound to anything else as well is left out."""
        key = id(cls.node)
        if key in self._attribute_functions:
            return self._attribute_functions[key]
        found: dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]] = {}
        other: set[str] = set()
        for method in cls.methods.values():
            for node in self.bindings(method):
                if not isinstance(node, ast.Assign):
                    continue
                for target in node.targets:
                    if not (isinstance(target, ast.Attribute) and method.is_self(target.value)):
                        continue
                    resolved = self._function_value(node.value, method)
                    previous = found.get(target.attr)
                    if resolved is None or (previous is not None and previous[1] != resolved[1]):
                        other.add(target.attr)
                    else:
                        functions = {id(f.node): f for f in (*(previous[0] if previous else ()), *resolved[0])}
                        found[target.attr] = (tuple(functions.values()), resolved[1])
        self._attribute_functions[key] = {name: value for name, value in found.items() if name not in other}
        return self._attribute_functions[key]

    def _function_value(
        self, value: ast.expr, scope: FunctionInfo
    ) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """A function `value` names: `function`, `TABLE[key]` (one of the table's), or an imported one."""
        looked_up = isinstance(value, ast.Subscript)
        name = value.value if isinstance(value, ast.Subscript) else value
        if not isinstance(name, ast.Name) or name.id in scope.local_names:
            return None
        if looked_up and name.id in self.index.function_tables:
            return tuple(self.index.functions[f] for f in self.index.function_tables[name.id]), None
        if not looked_up and name.id in self.index.functions:
            return (self.index.functions[name.id],), None
        qualname = self._qualified(name, scope)
        if qualname is None or not _may_be_project_name(qualname):
            return None
        return (), ExternalRef("table" if looked_up else "call", qualname)

    def attribute_functions(
        self, call: ast.Call, scope: FunctionInfo
    ) -> tuple[tuple[FunctionInfo, ...], ExternalRef | None] | None:
        """What `self.fn(...)` runs when the class binds `self.fn` to a function (see above)."""
        func = call.func
        owner = scope.method.owner if scope.method else None
        if owner is None or not isinstance(func, ast.Attribute) or not scope.is_self(func.value):
            return None
        if owner.find_method(func.attr) is not None:
            return None
        return self._class_attribute_functions(owner).get(func.attr)

    def resolve_call(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """The same-file function or method a call runs, if it can be known statically."""
        func = call.func
        picked = self._picked_method(func, scope)
        if picked is not None:
            return picked
        if isinstance(func, ast.Name):
            function = self.resolve_function_name(func.id, scope)
            if function is not None:
                return function
            cls = self._instance_class(func, scope)
            return cls.find_method("forward") if cls is not None and cls.is_module else None
        if not isinstance(func, ast.Attribute):
            return None
        owner = scope.method.owner if scope.method else None
        receiver = func.value
        if owner is not None and scope.is_self(receiver):
            method = owner.find_method(func.attr)
            if method is not None:
                return method
        if owner is not None and _is_super_call(receiver):
            for base in owner.bases:
                method = base.find_method(func.attr)
                if method is not None:
                    return method
            return None
        if (
            isinstance(receiver, ast.Name)
            and receiver.id not in scope.local_names
            and receiver.id in self.index.classes
        ):
            return self.index.classes[receiver.id].find_method(func.attr)
        cls = self._instance_class(receiver, scope)
        if cls is not None:
            return cls.find_method(func.attr)
        return None

    def _picked_method(self, func: ast.expr, scope: FunctionInfo) -> FunctionInfo | None:
        """`getattr(self, "name")(...)`, or a local bound once to `getattr(self, "name")`: the method
        of that constant name."""
        owner = scope.method.owner if scope.method else None
        if owner is None:
            return None
        if isinstance(func, ast.Name) and func.id in scope.local_names:
            values = self.assigned_values(scope).get(func.id, [])
            func = values[0] if len(values) == 1 else func
        if not (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Name)
            and func.func.id == "getattr"
            and self.index.is_builtin("getattr", scope.local_names)
            and len(func.args) == 2
            and not func.keywords
            and scope.is_self(func.args[0])
            and isinstance(func.args[1], ast.Constant)
            and isinstance(func.args[1].value, str)
        ):
            return None
        return owner.find_method(func.args[1].value)

    def module_call_target(self, call: ast.Call, scope: FunctionInfo) -> FunctionInfo | None:
        """`self.block(x)` where `self.block = Block(...)`: calling a module runs its forward."""
        func = call.func
        cls = self._instance_class(func, scope)
        if cls is not None and cls.is_module:
            return cls.find_method("forward")
        return None

    def external_call(self, call: ast.Call, scope: FunctionInfo) -> ExternalRef | None:
        """The call as an `ExternalRef` when what it runs is defined in another file (or may be):
        an imported function, an instance of an imported class or one of its methods, or a
        method `self` inherits from a base class imported from elsewhere."""
        func = call.func
        if isinstance(func, ast.Name):
            instance = self._imported_instance(func, scope)
            return ExternalRef("instance", instance) if instance is not None else self._call_ref(func, scope)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        instance = self._imported_instance(func, scope)  # `self.block(x)`, `self.block = Block()`
        if instance is not None:
            return ExternalRef("instance", instance)
        owner = self._imported_instance(receiver, scope)  # `self.block.step(x)`, `block.step(x)`
        if owner is not None:
            return ExternalRef("method", owner, func.attr)
        cls = scope.method.owner if scope.method else None
        if cls is not None and (scope.is_self(receiver) or _is_super_call(receiver)):
            if scope.is_self(receiver) and (
                cls.find_method(func.attr) is not None or func.attr in self.class_attribute_instances(cls)
            ):
                return None
            base = next(
                (
                    b
                    for c in cls.mro()
                    for b in c.base_names
                    if b is not None and b not in self.index.classes and _may_be_project_name(b)
                ),
                None,
            )
            return ExternalRef("method", base, func.attr) if base is not None else None
        return self._call_ref(func, scope)

    def _call_ref(self, func: ast.expr, scope: FunctionInfo | None) -> ExternalRef | None:
        qualname = self._qualified(func, scope)
        if qualname is None or not _may_be_project_name(qualname):
            return None
        return ExternalRef("call", qualname)


# Roots of qualified names that never name code of the project (the standard library, torch).
_NOT_PROJECT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "builtins"}


def _may_be_project_name(qualname: str) -> bool:
    return qualname.lstrip(".").split(".", 1)[0] not in _NOT_PROJECT


def _is_super_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"
