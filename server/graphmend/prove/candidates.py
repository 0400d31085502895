"""The fixes a proof tries, and the rewritten text of a file for any subset of them.

A candidate is one fix of the first round of `fix` (an outer `if` whose inner one is fixed in a
later round is proved by proving again once the first is applied). It knows the function it
rewrites: the function's text hash says when a proof of it goes stale, and the fix's hash (the
function's text and the edits, placed relative to it) names the fix in a proof record however far
the function moves in its file.
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Applicability, Diagnostic, Fix
from ..files import SourceError, decode_source, is_notebook, iter_settings, read_bytes
from ..fixes import apply_fixes
from ..pipelines import build_project, check_source, context_for
from ..proof_records import fix_hash, project_relative, text_hash


@dataclass(frozen=True)
class Candidate:
    """One fix to prove, at 1-based lines `line`..`end_line` of `path`."""

    path: Path
    line: int
    end_line: int
    code: str
    message: str
    fix: Fix
    function: str  # its qualified name ("<module>" at the top level)
    function_hash: str  # the text of the function the finding is in
    fix_hash: str

    @property
    def safe(self) -> bool:
        return self.fix.applicability is Applicability.SAFE

    @property
    def lines(self) -> range:
        return range(self.line, self.end_line + 1)

    def label(self, root: Path) -> str:
        return f"{project_relative(self.path, root) or self.path}:{self.line} {self.code} in {self.function}"


def find_candidates(
    paths: Iterable[Path], overrides: Mapping[str, Any] | None = None, unsafe: bool = False, jobs: int | None = 1
) -> list[Candidate]:
    """The fixes `fix` would apply first to the Python files under `paths` (safe ones, and unsafe
    ones with `unsafe`), each with its function and hashes. Notebooks are not run as modules: skipped."""
    files = [path for path, _ in iter_settings(paths, overrides) if not is_notebook(path)]
    project = build_project(files, overrides, jobs, None)
    allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
    found: list[Candidate] = []
    for path, settings in iter_settings(files, overrides):
        try:
            text, _ = decode_source(read_bytes(path))
        except SourceError:
            continue
        diagnostics = check_source(text, path, settings, context_for(project, path, settings))
        fixable = _apart([d for d in diagnostics if d.fix is not None and d.fix.applicability in allowed], text)
        if not fixable:
            continue
        tree = ast.parse(text)
        for diagnostic in fixable:
            assert diagnostic.fix is not None
            line = diagnostic.range.start.line + 1
            name, function_hash, key = fix_hash(text, tree, diagnostic.fix, line)
            found.append(
                Candidate(
                    Path(os.path.abspath(path)),
                    line,
                    diagnostic.range.end.line + 1,
                    diagnostic.code,
                    diagnostic.message,
                    diagnostic.fix,
                    name,
                    function_hash,
                    key,
                )
            )
    return found


def function_hashes(text: str) -> dict[str, str]:
    """Each function's (and method's) qualified name → the hash of its text, as `Candidate` has it."""
    tree = ast.parse(text)
    hashes = {"<module>": text_hash(text)}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    hashes[name] = text_hash(ast.get_source_segment(text, child) or "")
                visit(child, name + ".")

    visit(tree, "")
    return hashes


FOLLOW_UPS = frozenset({"GM204"})  # fixes of what other fixes leave: an in-graph message's stale line
MAX_FOLLOW_UP_ROUNDS = 5


def _apart(diagnostics: list[Diagnostic], text: str) -> list[Diagnostic]:
    """The fixes that apply together, in order: one whose edits overlap an earlier one's (an `elif`
    chain, a message inside a fixed `if`) would never be served, so it waits for the next proof."""
    kept: list[Diagnostic] = []
    for diagnostic in diagnostics:
        assert diagnostic.fix is not None
        _, count = apply_fixes(text, [d.fix for d in kept if d.fix is not None] + [diagnostic.fix])
        if count == len(kept) + 1:
            kept.append(diagnostic)
    return kept


def rewritten(path: Path, candidates: Iterable[Candidate], text: str | None = None) -> str:
    """The text of `path` (or `text`, as it was read) with the fixes of `candidates` in it applied, then, as `fix` does in its
    later rounds, the follow-up fixes they call for (a message kept in the graph writes its own line,
    which a helper another fix inserts above moves)."""
    if text is None:
        text, _ = decode_source(read_bytes(path))
    fixed, _ = apply_fixes(text, [c.fix for c in candidates if c.path == path])
    for _ in range(MAX_FOLLOW_UP_ROUNDS):
        follow_ups = [d.fix for d in check_source(fixed, path) if d.code in FOLLOW_UPS and d.fix is not None]
        if not follow_ups:
            break
        fixed, _ = apply_fixes(fixed, follow_ups)
    return fixed


def line_map(original: str, fixed: str) -> list[int]:
    """For each line of `fixed` (1-based position), the original line it stands for: a changed line
    stands for the first line of what it replaced (an added one, for the line before it)."""
    first, second = original.splitlines(), fixed.splitlines()
    mapped = [0] * len(second)
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                mapped[j] = i1 + (j - j1) + 1
            else:
                mapped[j] = min(i1 + min(j - j1, max(i2 - i1 - 1, 0)), max(len(first) - 1, 0)) + 1 if i2 > i1 else i1
    return mapped
