"""What a function's analysis reads of its module (`ModuleFacts`): declared apart so that the
parts of the analysis and `ModuleAnalysis`, which makes function analyses, need not import each
other."""

from __future__ import annotations

import ast
from typing import Protocol

from ..kinds import Env, Kind
from ..regions import CompiledRegions
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
    def entry_tensor_parameters(self, function: FunctionInfo) -> frozenset[str]: ...
    def numpy_call_lines(self, function: FunctionInfo) -> list[int]: ...
    def init_values(self, cls: ClassInfo) -> dict[str, list[tuple[FunctionInfo, ast.expr | None]]]: ...
    def constructors(self, cls: ClassInfo) -> dict[str, frozenset[str]]: ...
    def class_attributes(self, cls: ClassInfo) -> dict[str, Kind]: ...
