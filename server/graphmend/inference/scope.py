"""What a name refers to inside one function: the module's imports unless a binding of the
function (or an enclosing one) hides them, builtins and `self`. Fixed for the function: nothing
here changes as the walk goes on."""

from __future__ import annotations

import ast
from functools import cached_property

from ..semantics import FunctionInfo
from .state import ModuleFacts


class Scope:
    """Name lookups of one function (`function` None: the module's top level)."""

    def __init__(self, module: ModuleFacts, function: FunctionInfo | None) -> None:
        self.module = module
        self.index = module.index
        self.function = function
        self.local_names: frozenset[str] = function.local_names if function else frozenset()
        self.self_name = function.self_name if function else None

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
