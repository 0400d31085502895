"""What a name refers to inside one function: the module's imports unless a binding of the
function (or an enclosing one) hides them, builtins, `self`, and the kind a name has now."""

from __future__ import annotations

import ast
from functools import cached_property

from ..kinds import Kind
from ..semantics import FunctionInfo
from .state import FunctionState


class NameScope(FunctionState):
    """Name lookups of one function."""

    def is_self(self, expr: ast.expr) -> bool:
        return self.function is not None and self.function.is_self(expr)

    def qualified_name(self, expr: ast.expr) -> str | None:
        return self.index.qualified_name(expr, self.shadowed_names, self.local_imports)

    @cached_property
    def shadowed_names(self) -> frozenset[str]:
        """Names bound in this function or an enclosing one: they hide module-level bindings."""
        names = self.local_names
        parent = self.function.parent if self.function else None
        while parent is not None:
            names = names | parent.local_names
            parent = parent.parent
        return names

    @cached_property
    def local_imports(self) -> dict[str, str]:
        chain: list[FunctionInfo] = []
        function = self.function
        while function is not None:
            chain.append(function)
            function = function.parent
        imports: dict[str, str] = {}
        for function in reversed(chain):
            imports.update(function.local_imports)
        return imports

    def is_builtin(self, name: str) -> bool:
        return self.index.is_builtin(name, self.shadowed_names)

    def name_kind(self, name: str) -> Kind:
        if name in self.env:
            return self.env[name]
        if name in self.local_names:
            return Kind.UNKNOWN  # bound later on this path, or by something we do not track
        parent = self.function.parent if self.function else None
        while parent is not None:
            if name in parent.local_names:
                return self.module.final_env(parent).get(name, Kind.UNKNOWN)
            parent = parent.parent
        return self.module.module_env.get(name, Kind.UNKNOWN) if self.function else Kind.UNKNOWN
