"""What every part of a function's analysis reads: the function, its module, and the kinds of
its names in force at the point the walk has reached (with the cache of expression kinds that a
change of them clears)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kinds import Env, Kind
from ..regions import Entry
from ..semantics import FunctionInfo, ModuleIndex

if TYPE_CHECKING:
    from .module import ModuleAnalysis


class FunctionState:
    """The attributes `FunctionAnalysis.__init__` sets, declared for the parts that read them."""

    module: ModuleAnalysis
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
