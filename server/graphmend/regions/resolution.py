"""What a call of one module runs: a same-file function or method (lexical scoping, `self.`
methods and attributes bound to functions, `super()`, `getattr(self, "name")`), or code of another
file as an `ExternalRef`."""

from __future__ import annotations

import ast

from ..semantics import ClassInfo, FunctionInfo, ModuleIndex
from .instances import Instances, may_be_project_name, qualified
from .records import ExternalRef
from .scope_facts import ScopeFacts


class CallResolution:
    """Name and call resolution of one module, over its scope facts and instances; what a
    class's `self.fn` attributes are bound to is cached per class."""

    def __init__(self, index: ModuleIndex, facts: ScopeFacts, instances: Instances) -> None:
        self.index = index
        self.facts = facts
        self.instances = instances
        self._attribute_functions: dict[int, dict[str, tuple[tuple[FunctionInfo, ...], ExternalRef | None]]] = {}

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
            for node in self.facts.bindings(method):
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
        qualname = qualified(self.index, name, scope)
        if qualname is None or not may_be_project_name(qualname):
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
            cls = self.instances.instance_class(func, scope)
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
        cls = self.instances.instance_class(receiver, scope)
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
            values = self.facts.assigned_values(scope).get(func.id, [])
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
        cls = self.instances.instance_class(func, scope)
        if cls is not None and cls.is_module:
            return cls.find_method("forward")
        return None

    def external_call(self, call: ast.Call, scope: FunctionInfo) -> ExternalRef | None:
        """The call as an `ExternalRef` when what it runs is defined in another file (or may be):
        an imported function, an instance of an imported class or one of its methods, or a
        method `self` inherits from a base class imported from elsewhere."""
        func = call.func
        if isinstance(func, ast.Name):
            instance = self.instances.imported_instance(func, scope)
            return ExternalRef("instance", instance) if instance is not None else self.call_ref(func, scope)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        instance = self.instances.imported_instance(func, scope)  # `self.block(x)`, `self.block = Block()`
        if instance is not None:
            return ExternalRef("instance", instance)
        owner = self.instances.imported_instance(receiver, scope)  # `self.block.step(x)`, `block.step(x)`
        if owner is not None:
            return ExternalRef("method", owner, func.attr)
        cls = scope.method.owner if scope.method else None
        if cls is not None and (scope.is_self(receiver) or _is_super_call(receiver)):
            if scope.is_self(receiver) and (
                cls.find_method(func.attr) is not None or func.attr in self.instances.class_attribute_instances(cls)
            ):
                return None
            base = next(
                (
                    b
                    for c in cls.mro()
                    for b in c.base_names
                    if b is not None and b not in self.index.classes and may_be_project_name(b)
                ),
                None,
            )
            return ExternalRef("method", base, func.attr) if base is not None else None
        return self.call_ref(func, scope)

    def call_ref(self, func: ast.expr, scope: FunctionInfo | None) -> ExternalRef | None:
        """Calling `func` as a `call` of the imported name it is, when that may be the project's."""
        qualname = qualified(self.index, func, scope)
        if qualname is None or not may_be_project_name(qualname):
            return None
        return ExternalRef("call", qualname)


def _is_super_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"
