"""What every part of a function's analysis reads: the function, the facts of its module, and the
kinds of its names in force at the point the walk has reached (with the cache of expression
kinds that a change of them clears)."""

from __future__ import annotations

import ast
from typing import Protocol

from ..kinds import Env, Kind
from ..regions import CompiledRegions, Entry
from ..semantics import ClassInfo, FunctionInfo, ModuleIndex


class ModuleFacts(Protocol):
    """What a function's analysis asks of its module (`ModuleAnalysis`, which makes the function
    analyses it needs: declared here so that neither imports the other's module)."""

    index: ModuleIndex
    regions: CompiledRegions
    module_env: Env
    imports_numpy: bool
    torch_version: tuple[int, int] | None  # the torch the code runs on (None: unknown)

    def return_kind(self, function: FunctionInfo) -> Kind: ...
    def final_env(self, function: FunctionInfo) -> Env: ...
    def numpy_parameters(self, function: FunctionInfo) -> frozenset[str]: ...
    def init_values(self, cls: ClassInfo) -> dict[str, list[tuple[FunctionInfo, ast.expr | None]]]: ...
    def constructors(self, cls: ClassInfo) -> dict[str, frozenset[str]]: ...
    def class_attributes(self, cls: ClassInfo) -> dict[str, Kind]: ...


class FunctionState:
    """The attributes `FunctionAnalysis.__init__` sets, declared for the parts that read them."""

    module: ModuleFacts
    entry: Entry | None  # the compiled entry this function is analysed as part of
    index: ModuleIndex
    function: FunctionInfo | None
    local_names: frozenset[str]
    self_name: str | None
    _env: Env
    _kinds: dict[int, Kind]  # id(expression) → kind, for the names' kinds in force now

    @property
    def env(self) -> Env:
        """The kinds of the names in force at the point the walk has reached."""
        return self._env

    @env.setter
    def env(self, kinds: Env) -> None:
        self._env = kinds
        self._kinds.clear()
