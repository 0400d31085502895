"""Proofs on the user's run, as `check` and the editor read them back (`graphmend fix --prove`).

A proof record (`.graphmend/proofs/<proof>/proof.json`, written by `prove.records`) keeps each
fix's verdict under the fix's hash: the text of the function it rewrites and its edits, placed
relative to that function. A finding whose fix hashes the same has that verdict; once the function's
text changes the hash does too, and the proof no longer speaks for it (it is stale). A repository
can ship records: one counts only when this user's graphmend signed it (`signing`), it is read as
untrusted (`untrusted`: a regular file, no link, bounded) and the run folders it names are there.
Standard library only: the checker reads these for every file of a project that has proofs.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Fix, ProofSeen
from .signing import signed_by_this_user
from .untrusted import load_json, real_folder

PROOFS = Path(".graphmend") / "proofs"
PROVED = "proved"
DIFFERS = "differs"
NOT_EXERCISED = "not exercised"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fix_hash(text: str, tree: ast.Module, fix: Fix, line: int) -> tuple[str, str, str]:
    """(the function's qualified name, the hash of its text, the fix's hash) for a fix of the
    finding at 1-based `line` of `text`."""
    name, node = enclosing_function(tree, line)
    function_text = (ast.get_source_segment(text, node) if node is not None else text) or ""
    start = node.lineno if node is not None else 1  # type: ignore[attr-defined]
    return name, text_hash(function_text), _fix_hash(function_text, fix, start, node)


def enclosing_function(tree: ast.Module, line: int) -> tuple[str, ast.AST | None]:
    """The innermost function holding `line`, by qualified name (classes and functions on the way)."""
    names: list[str] = []
    found: ast.AST | None = None
    node: ast.AST = tree
    while True:
        inner = next(
            (
                child
                for child in ast.iter_child_nodes(node)
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and child.lineno <= line <= (child.end_lineno or child.lineno)
            ),
            None,
        )
        if inner is None:
            break
        names.append(inner.name)
        if not isinstance(inner, ast.ClassDef):
            found = inner
        node = inner
    if found is None:
        return "<module>", None
    depth = names.index(found.name) + 1  # type: ignore[attr-defined]
    return ".".join(names[:depth]), found


def _fix_hash(function_text: str, fix: Fix, start: int, node: ast.AST | None) -> str:
    end = getattr(node, "end_lineno", None)
    edits = []
    for edit in fix.edits:
        first, last = edit.range.start.line + 1, edit.range.end.line + 1
        inside = node is None or (start <= first and end is not None and last <= end)
        where: Any = (
            [first - start, edit.range.start.character, last - start, edit.range.end.character] if inside else "outside"
        )
        edits.append([where, edit.new_text])
    return text_hash(function_text + "\0" + json.dumps(edits))


_READ: dict[Path, tuple[tuple[tuple[str, int], ...], dict[str, dict[str, ProofSeen]]]] = {}


def file_verdicts(path: Path) -> tuple[tuple[str, ProofSeen], ...]:
    """The verdicts the proof records of `path`'s project hold for fixes in that file, by fix hash;
    the records are read again only when one changes."""
    from .record.runs import project_root  # the project root as runs have it

    root = project_root(path.parent)
    folder = root / PROOFS
    if not (real_folder(folder.parent) and real_folder(folder)):
        return ()
    files = sorted(f for f in folder.glob("*/proof.json") if real_folder(f.parent))
    signature = tuple((str(f), f.lstat().st_mtime_ns) for f in files)
    known = _READ.get(root)
    if known is None or known[0] != signature:
        known = (signature, _by_file(files))
        _READ[root] = known
    relative = project_relative(path, root)
    return tuple(sorted(known[1].get(relative, {}).items())) if relative is not None else ()


def project_relative(path: Path, root: Path) -> str | None:
    """`path` as proof records name it: relative to the project root, real paths, `/`-separated;
    None outside the project. Written and read with this one function, so that they meet."""
    try:
        return Path(os.path.realpath(path)).relative_to(Path(os.path.realpath(root))).as_posix()
    except ValueError:
        return None


def _by_file(files: list[Path]) -> dict[str, dict[str, ProofSeen]]:
    """Each file's fix hash → its newest verdict in `files` (proof records)."""
    newest: dict[tuple[str, str], ProofSeen] = {}
    for file in files:
        try:
            record = load_json(file)
            if not isinstance(record, dict) or not signed_by_this_user(record) or not _runs_there(record, file.parent):
                continue
            ended = float(record["ended"])
            command = " ".join(record["command"])
            for fix in record["fixes"]:
                seen = ProofSeen(
                    fix["verdict"],
                    command,
                    record["processes"],
                    record["steps"],
                    record["calls"],
                    ended,
                    tuple(fix["differences"]),
                )
                place = (fix["path"], fix["fix_hash"])
                if place not in newest or newest[place].ended < ended:
                    newest[place] = seen
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a record being written, or from another version (UntrustedFileError is an OSError)
    by_file: dict[str, dict[str, ProofSeen]] = {}
    for (path, fix_key), seen in newest.items():
        by_file.setdefault(path, {})[fix_key] = seen
    return by_file


def _runs_there(record: dict[str, Any], folder: Path) -> bool:
    """The run folders a record names are in its folder (a proof that ran left them there)."""
    runs = record.get("runs")
    return (
        isinstance(runs, list)
        and bool(runs)
        and all(
            isinstance(run, dict)
            and isinstance(run.get("folder"), str)
            and "/" not in run["folder"]
            and run["folder"] not in ("", ".", "..")
            and real_folder(folder / run["folder"])
            for run in runs
        )
    )


def with_verdicts(
    diagnostics: list[Diagnostic], text: str, proofs: tuple[tuple[str, ProofSeen], ...]
) -> list[Diagnostic]:
    """`diagnostics` with the verdict of each fix a proof record holds (`data.proof`)."""
    verdicts = dict(proofs)
    if not verdicts or not any(d.fix is not None for d in diagnostics):
        return diagnostics
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return diagnostics
    marked = []
    for diagnostic in diagnostics:
        if diagnostic.fix is not None:
            _, _, key = fix_hash(text, tree, diagnostic.fix, diagnostic.range.start.line + 1)
            known = verdicts.get(key)
            if known is not None:
                diagnostic = replace(diagnostic, data=replace(diagnostic.data, proof=known))
        marked.append(diagnostic)
    return marked
