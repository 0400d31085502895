"""Re-analysing only the units an edit touched gives exactly what a full analysis gives.

Random edits (seeded) inside functions, in class `__init__`s, in helpers other functions call, and
in the module's own statements, applied one after the other to real model files; after each,
the diagnostics computed with the document's unit cache must equal those of a fresh analysis,
fixes and messages included, and the cache must have been used (some units reused)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from conftest import ROOT

from graphmend.checker import check_text
from graphmend.units import UnitCache

TRANSFORMERS = pytest.importorskip("transformers")
MODELS = Path(TRANSFORMERS.__file__).parent / "models"
FILES = [
    MODELS / "phi3" / "modeling_phi3.py",
    MODELS / "bart" / "modeling_bart.py",
    ROOT / "tests" / "dynamo_corpus" / "pos_rope_state.py",
    ROOT / "examples" / "figure1.py",
]
EDITS_PER_FILE = 20


def _statement_lines(text: str) -> list[tuple[int, str, ast.stmt]]:
    """(0-based line, indentation, statement) of simple statements inside functions."""
    found: list[tuple[int, str, ast.stmt]] = []
    lines = text.split("\n")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                if (
                    isinstance(stmt, (ast.Assign, ast.Expr, ast.AugAssign, ast.Return))
                    and stmt.lineno == stmt.end_lineno
                ):
                    line = lines[stmt.lineno - 1]
                    found.append((stmt.lineno - 1, line[: len(line) - len(line.lstrip())], stmt))
    return found


def _top_level_gaps(text: str) -> list[int]:
    """0-based lines between top-level statements (where a new one may go): before each of them,
    and at the end."""
    tree = ast.parse(text)
    starts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) - 1 for s in tree.body]
    return [*starts, len(text.split("\n"))]


SKELETON_EDITS = {  # issue 40: edits between top-level statements
    "gap-comment": ["# edited between statements"],
    "gap-blank": [""],
    "gap-import": ["import os"],
    "gap-from-import": ["from collections import OrderedDict as _GmOrdered"],
    "gap-constant": ["_GM_CONSTANT = 3"],
    "gap-helper": ["def _gm_helper(x):", "    return x", ""],
    "gap-torch-alias": ["import torch as _gm_th"],
    "gap-setting": ["torch._dynamo.config.capture_scalar_outputs = True"],
}


def _edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    candidates = _statement_lines(text)
    line, indent, stmt = rng.choice(candidates)
    kinds = ["comment", "insert", "print", "delete", "tensor-if", "skeleton", "rename-call", *SKELETON_EDITS]
    kind = rng.choice([*kinds, "join-gap"])
    if kind == "comment":
        lines[line] += "  # edited"
    elif kind == "insert":
        lines.insert(line + 1, f"{indent}_gm_unused = 1")
    elif kind == "print":
        lines.insert(line + 1, f"{indent}print('edited')")
    elif kind == "delete" and isinstance(stmt, (ast.Assign, ast.AugAssign)):
        lines.insert(line, f"{indent}pass")
        del lines[line + 1]
    elif kind == "tensor-if":
        target = next((t.id for t in getattr(stmt, "targets", []) if isinstance(t, ast.Name)), None)
        if target is not None:
            lines[line + 1 : line + 1] = [f"{indent}if {target}.sum() > 0:", f"{indent}    {target} = {target} * 2"]
    elif kind == "skeleton":
        lines.insert(0, "import math  # edited")
    elif kind == "rename-call":
        lines[line] = lines[line].replace("(", "_renamed(", 1) if "(" in lines[line] else lines[line]
    elif kind in SKELETON_EDITS:
        gap = rng.choice(_top_level_gaps(text))
        lines[gap:gap] = SKELETON_EDITS[kind]
    elif kind == "join-gap":  # a blank line between top-level statements goes
        blanks = [i for i in _top_level_gaps(text) if 0 < i < len(lines) and not lines[i - 1].strip()]
        if blanks:
            del lines[rng.choice(blanks) - 1]
    new = "\n".join(lines)
    try:
        ast.parse(new)
    except SyntaxError:
        return text
    return new


def _plain(diagnostics: list) -> list:
    return [(d, d.data) for d in diagnostics]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_incremental_equals_full(path: Path) -> None:
    rng = random.Random(f"graphmend-{path.stem}")
    text = path.read_text(encoding="utf-8")
    cache = UnitCache()
    assert _plain(check_text(text, path, cache=cache)) == _plain(check_text(text, path))
    for step in range(EDITS_PER_FILE):
        text = _edit(text, rng)
        incremental = check_text(text, path, cache=cache)
        assert _plain(incremental) == _plain(check_text(text, path)), f"edit {step} of {path.name}"
    assert cache.hits > 0, "the cache was never used"


def test_an_edit_in_one_method_reanalyses_only_its_unit_and_dependents() -> None:
    path = MODELS / "t5" / "modeling_t5.py"
    text = path.read_text(encoding="utf-8")
    cache = UnitCache()
    check_text(text, path, cache=cache)
    hits, misses = cache.hits, cache.misses
    anchor = "        scores += position_bias_masked\n"
    assert anchor in text
    check_text(text.replace(anchor, anchor.rstrip("\n") + "  # edited\n", 1), path, cache=cache)
    reanalysed = cache.misses - misses
    reused = cache.hits - hits
    assert 1 <= reanalysed <= 3 and reused >= 10, (reanalysed, reused)


HELPER = """import torch


def scale(x):
    return x * 2


def enabled(x):
    return True


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = True


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        if x.sum() > 0:
            x = scale(x)
        if enabled(x):
            x = x + 1
        return x
"""


@pytest.mark.parametrize(
    "edit",
    [
        (
            "    return x * 2\n",
            "    print('scaling')\n    return x * 2\n",
        ),  # the helper a branch calls is no longer pure
        ("    return True\n", "    return x.any()\n"),  # a function called in a condition now returns a tensor
        ("import torch\n", "import torch as th\nimport torch\n"),  # the module's own statements
    ],
)
def test_an_edit_elsewhere_reaches_the_units_that_depend_on_it(edit: tuple[str, str]) -> None:
    path = ROOT / "examples" / "dependent_units.py"  # a name only: nothing is read from disk
    cache = UnitCache()
    before = check_text(HELPER, path, cache=cache)
    after_text = HELPER.replace(*edit)
    incremental = check_text(after_text, path, cache=cache)
    assert _plain(incremental) == _plain(check_text(after_text, path))
    assert _plain(incremental) != _plain(before), "the edit changes what is reported in another unit"


def _t5_edits() -> dict[str, tuple[str, int]]:
    """Issue 40: each kind of edit on T5, and how many units it analyses again (of 17 reached)."""
    text = (MODELS / "t5" / "modeling_t5.py").read_text(encoding="utf-8")
    anchor = "        scores += position_bias_masked\n"
    return {
        "trailing comment": (text + "\n# edited\n", 0),
        # lines above a unit move it: the one whose fix keeps a log in the graph writes the call's line
        # (`T5Stack.forward`'s `warning_once`), so it is analysed again where it now is (issue 50)
        "blank lines between statements": (text.replace("\n\n\n", "\n\n\n\n", 5), 1),
        "an import in the import block": (text.replace("\nimport torch\n", "\nimport torch\nimport os\n", 1), 1),
        "a new top-level function": (text + "\n\ndef _helper_added(x):\n    return x\n", 0),
        # the units that read `logger` (their deferral helpers go after its binding) and nothing else
        "a constant before the logger": (text.replace("\nlogger =", "\n_GM_LIMIT = 3\nlogger =", 1), 4),
        # its unit, and the two whose analysis reads it (they call into it)
        "a comment inside one method": (text.replace(anchor, anchor.rstrip("\n") + "  # edited\n", 1), 3),
    }


@pytest.mark.parametrize("kind", list(_t5_edits()))
def test_each_kind_of_edit_analyses_again_only_the_units_it_changes(kind: str) -> None:
    path = MODELS / "t5" / "modeling_t5.py"
    text = path.read_text(encoding="utf-8")
    edited, expected = _t5_edits()[kind]
    cache = UnitCache()
    check_text(text, path, cache=cache)
    hits, misses = cache.hits, cache.misses
    incremental = check_text(edited, path, cache=cache)
    assert _plain(incremental) == _plain(check_text(edited, path))
    assert (cache.misses - misses, cache.hits - hits) == (expected, 17 - expected)


_IMPLICIT = (ROOT / "tests" / "dynamo_corpus" / "pos_implicit_setattr.py").read_text(encoding="utf-8")
_PASSED = """import torch


@torch.compile
def head(x, n):
    return x[:n] * 2


@torch.compile
def tail(x, n):
    return x[-n:] * 2


def run(x):
    return head(x, torch.tensor(2))


N = torch.tensor(2)
y = tail(torch.ones(3), N)
"""
# Issue 56: edits that change what a unit's analysis reads outside it. The dunder a statement runs
# implicitly, and what a call of a compiled function passes it (from a function or the top level).
_READ_ELSEWHERE = {
    "a dunder renamed": (
        _IMPLICIT,
        "def __setattr__(self, name, value):\n        torch._dynamo",
        "def set_attr(self, name, value):\n        torch._dynamo",
        1,
    ),
    "an instance of another class": (_IMPLICIT, "BOX = Box()", "BOX = Plain()", 1),
    "a caller passes an int": (_PASSED, "return head(x, torch.tensor(2))", "return head(x, 2)", 1),
    "the top level passes an int": (_PASSED, "N = torch.tensor(2)", "N = 2", 1),
}


@pytest.mark.parametrize("kind", list(_READ_ELSEWHERE))
def test_an_edit_of_what_a_unit_reads_elsewhere_analyses_it_again(kind: str, tmp_path: Path) -> None:
    text, old, new, dropped = _READ_ELSEWHERE[kind]
    path = tmp_path / "program.py"
    cache = UnitCache()
    before = check_text(text, path, cache=cache)
    edited = text.replace(old, new, 1)
    assert edited != text
    incremental = check_text(edited, path, cache=cache)
    assert _plain(incremental) == _plain(check_text(edited, path))
    assert len(before) - len(incremental) == dropped
