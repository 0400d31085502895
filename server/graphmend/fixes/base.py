"""What every rewrite needs: the file's text and names, fresh-name generation, refusals."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..analysis.module_state import holds_a_configuration
from ..diagnostics import TextEdit
from ..inference import FunctionAnalysis
from ..messages import is_logging
from ..regions import Entry
from ..semantics import ModuleIndex, child_nodes, once_per_module, walk
from ..source import Position, Range, SourceText

WORD = re.compile(r"[^\W\d]\w*")  # what `has_word` counts as a word of the text


@dataclass(frozen=True)
class Refusal:
    """Why no fix is offered, and what the user can do instead where the rule's own advice is not it
    (a setting to make where the model is compiled): the hover leads with that."""

    reason: str
    action: str | None = None


def zero_gradients(parameters: str) -> str:
    """The hazard of running code that uses trained state (`self.proj`, `self.weight`) where the
    original did not: a zero gradient where there was none, which optimisers treat differently."""
    return (
        f"{parameters} get a zero gradient instead of none where the original did not run them, so an "
        "optimiser with momentum or weight decay (Adam, AdamW, SGD with momentum) still updates them"
    )


def may_be_scripted(analysis: FunctionAnalysis) -> bool:
    """Whether torch.jit.script may compile the function as written: not when its signature takes
    `*args`/`**kwargs`, nor when its body has what TorchScript rejects (`try`, `lambda`, nested
    `def`, `yield`, `global`, a logging call, a comprehension with an `if`: "Comprehension ifs are
    not supported yet", torch 2.13). Only there can a rewrite stop it scripting."""
    function = analysis.function
    if function is None:
        return False
    arguments = function.node.args
    if arguments.vararg is not None or arguments.kwarg is not None:
        return False
    for node in walk(function.node):
        if node is not function.node and isinstance(
            node,
            (
                ast.Try,
                ast.Lambda,
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.Yield,
                ast.YieldFrom,
                ast.Global,
                ast.Nonlocal,
            ),
        ):
            return False
        if isinstance(node, ast.Call) and is_logging(node, analysis):
            return False
        if isinstance(node, ast.comprehension) and node.ifs:
            return False
        if isinstance(node, ast.Attribute) and holds_a_configuration(node, analysis):
            return False
    return True


def unreached_gradients(name: str) -> str:
    """The hazard of reading, in one path only, a tensor computed before the `if`: what it was
    computed from gets a zero gradient where the original gave none, and NaN where the backward of
    what computed it is not finite at that point."""
    return (
        f"what `{name}` is computed from (the parameters it reads) gets a zero gradient instead of none where the "
        "path that reads it does not run, so an optimiser with momentum or weight decay (Adam, AdamW, SGD with "
        f"momentum) still updates them; and where the backward of what computed `{name}` is not finite there "
        "(`std` of one element, `sqrt` at 0) that gradient becomes NaN"
    )


_INDENT_UNIT = "_graphmend_indent_unit"  # where `FixContext.indent_unit` keeps its answer on the module's index


def _indent_unit(tree: ast.Module, lines: Sequence[str]) -> str:
    for node in walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.stmt) and isinstance(body, list) and body and body[0].lineno > node.lineno:
            outer = lines[node.lineno - 1]
            inner = lines[body[0].lineno - 1]
            outer_indent = outer[: len(outer) - len(outer.lstrip())]
            inner_indent = inner[: len(inner) - len(inner.lstrip())]
            if inner_indent.startswith(outer_indent) and len(inner_indent) > len(outer_indent):
                return inner_indent[len(outer_indent) :]
    return "    "


def has_word(word_sets: tuple[frozenset[str], ...], index: ModuleIndex, name: str) -> bool:
    """Whether `name` is one of the words, an imported name or a module-level name: what a fresh
    name must not be."""
    return any(name in words for words in word_sets) or name in index.imports or name in index.module_names


class Refused(Exception):
    """Raised deep inside a rewrite that cannot be made; its entry point returns it as a Refusal."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class FixContext:
    """What the rewrites of one unit of a file (a top-level function or class) share. Fresh names
    avoid `name_words`: the words of the unit and of the module's statements outside every unit, so
    a unit's fixes do not depend on the other units' bodies (each unit can be re-analysed alone)."""

    source: SourceText
    index: ModuleIndex
    # The words of the unit and of the skeleton, each set kept apart (their union per unit, in a file
    # of thousands of units, was quadratic); None: the whole file's.
    name_words: tuple[frozenset[str], ...] | None = None
    layer_skip: str = "where"  # the `layer-skip` setting: the form a loop gate's fix writes
    cuda_graphs: str = "auto"  # the `cuda-graphs` setting (see `cuda_graph_scope`)
    torch_version: tuple[int, int] | None = None  # the torch the code runs on (None: unknown, the newest)
    notebook: bool = False  # the unit is a notebook's cells: no `__file__`, lines counted across cells
    # Messages whose form (deferred or in the graph) is being decided: one in a loop with another
    # asks about it in turn; asked again, it answers without the order (`deferral._plan_operator`).
    deciding_order: set[int] = field(default_factory=set)
    taken_names: set[str] = field(default_factory=set)
    torch_import_requested: bool = False  # a rewrite used `torch_name` where the file imports no torch
    _next_number: dict[str, int] = field(default_factory=dict)  # per base name: where to continue counting
    # Each name asked of `file_has_word` and the answer: what the unit's fixes depend on outside the unit
    # (`units.UnitCache` reuses them while every answer holds).
    asked_names: dict[str, bool] = field(default_factory=dict)

    @cached_property
    def _file_words(self) -> frozenset[str]:
        """The whole file's words, where no unit's are given (a superset is only more careful, and
        a regular expression over the text is many times faster than a walk of the tree)."""
        return frozenset(WORD.findall(self.source.text))

    def file_has_word(self, name: str) -> bool:
        """Whether `name` is a word of the file a generated name must avoid (an identifier the unit
        can see or bind, a word of its comments and strings), noted in `asked_names`."""
        found = self.asked_names[name] = has_word(
            self.name_words if self.name_words is not None else (self._file_words,), self.index, name
        )
        return found

    @cached_property
    def imported_torch_name(self) -> str | None:
        """The module-level name bound to the torch module (`torch`, or `th` after `import torch as th`),
        and bound to nothing else: a helper reads it when it runs, after any later `torch = ...`."""
        candidates = [
            name
            for name, qualname in self.index.imports.items()
            if qualname == "torch" and name not in self.index.rebound_names
        ]
        return "torch" if "torch" in candidates else (candidates[0] if candidates else None)

    @property
    def torch_name(self) -> str | None:
        """The name a rewrite writes torch with: the file's own import, or `torch` when the file
        imports no torch (a helper module reached from compiled code elsewhere) and nothing in it
        is called `torch`; then the fix also adds `import torch` (`torch_import_edit`). None when
        `torch` names something else."""
        if self.imported_torch_name is not None:
            return self.imported_torch_name
        if "torch" in self.index.module_names or any("torch" in f.local_names for f in self.index.all_functions):
            return None
        self.torch_import_requested = True
        return "torch"

    @property
    def no_torch_name(self) -> str:
        """Why `torch_name` is None: the reason a rewrite that writes torch is refused."""
        rebound = [name for name, qualname in self.index.imports.items() if qualname == "torch"]
        if rebound:
            return f"`{rebound[0]}` is also bound to something else in this file, so it may not be torch when the rewrite runs"
        return "`torch` names something else in this file"

    def torch_import_edit(self) -> TextEdit:
        """`import torch` after the file's leading imports (after its docstring when it has none)."""
        body = self.index.tree.body
        anchor: ast.stmt | None = None
        for position, stmt in enumerate(body):
            is_docstring = (
                position == 0
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            )
            if not (is_docstring or isinstance(stmt, (ast.Import, ast.ImportFrom))):
                break
            anchor = stmt
        if anchor is not None:  # at the end of its last line, where module-level helpers go too: the import comes first
            line = (anchor.end_lineno or anchor.lineno) - 1
            end = Position(line, len(self.source.lines[line]))
            return TextEdit(Range(end, end), "\nimport torch")
        text = "import torch\n"
        if body:
            first = body[0]
            line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))]) - 1
            text += "\n\n" if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else "\n"
        else:
            line = len(self.source.lines) - 1
        return TextEdit(Range(Position(line, 0), Position(line, 0)), text)

    def cuda_graph_scope(self, entry: Entry | None) -> str | None:
        """Why code of `entry` is recorded as CUDA graphs (the setting, or the compile site's
        words), or None where it is not: what the GM4xx rules and the choice of `torch.where` over
        `torch.cond` go by."""
        if self.cuda_graphs == "always":
            return 'the `cuda-graphs = "always"` setting'
        request = entry.cuda_graphs if entry is not None and self.cuda_graphs == "auto" else None
        if entry is None or request is None:
            return None
        where = f" of {os.path.basename(entry.origin.path)}" if entry.origin is not None else ""
        return f"`{entry.function.qualname}` is compiled with {request}{where}"

    def fresh_name(self, base: str, avoid: set[str] | frozenset[str] = frozenset()) -> str:
        """`base`, or `base_2`, `base_3`... : a name used nowhere in the file nor handed out before."""
        number = self._next_number.get(base, 1)
        candidate = base if number == 1 else f"{base}_{number}"
        while self.file_has_word(candidate) or candidate in self.taken_names or candidate in avoid:
            number += 1
            candidate = f"{base}_{number}"
        self._next_number[base] = number
        self.taken_names.add(candidate)
        return candidate

    @property
    def indent_unit(self) -> str:
        """One level of indentation as this file writes it: the first indented block's (a tab, two
        spaces...), four spaces in a file with none. Found once per module, not once per unit."""
        found = self.index.__dict__.get(_INDENT_UNIT)
        if found is None:
            found = self.index.__dict__[_INDENT_UNIT] = _indent_unit(self.index.tree, self.source.lines)
        return found

    @property
    def top_level_functions(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        return _top_level_functions(self.index.tree)

    @property
    def top_level_bindings(self) -> dict[str, ast.stmt]:
        """Name → the last top-level statement that binds it (imports, assignments, also inside a
        top-level `try`/`if`)."""
        return _top_level_bindings(self.index.tree)

    def line_range(self, first_line: int, last_line: int) -> Range:
        """Whole lines `first_line..last_line` (1-based, inclusive), without the final line break."""
        end_text = self.source.lines[last_line - 1] if last_line - 1 < len(self.source.lines) else ""
        return Range(Position(first_line - 1, 0), Position(last_line - 1, len(end_text)))

    def segment(self, node: ast.AST) -> str:
        """The exact source text of an expression node."""
        return self.source.segment(node)


# Module facts every unit's context asks for: found once per module (a file of thousands of units
# would otherwise walk the module once per unit). Read-only: the dicts are shared.
@once_per_module
def _top_level_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


@once_per_module
def _top_level_bindings(tree: ast.Module) -> dict[str, ast.stmt]:
    bindings: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        stack: list[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and node is not stmt:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bindings[alias.asname or alias.name.split(".")[0]] = stmt
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is stmt:
                bindings[node.name] = stmt
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bindings[node.id] = stmt
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(child_nodes(node))
    return bindings
