"""The recompile rules (GM6xx) against real Dynamo: every line they predict a recompile at is where a
recorded run of the program places one, and every recompile the run places is predicted.

The programs are the benchmark's corpus (`benchmarks/recompile_corpus/`, `# recompile: <cause>` on
each line a recompile is recorded at) and the rules' fixtures (`tests/fixtures/GM60x/`, `# expect:`).
Each runs in this process under `graphmend.recording()` with Dynamo's cache reset, `torch.compile`
given `backend="eager"` (the guards are Dynamo's, whatever the backend: this keeps the runs short).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import runpy
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, with_recorded_run

from graphmend.api import Settings, check_source
from graphmend.recompiles import Program, Values
from graphmend.regions import CompiledRegions, compile_call_lines
from graphmend.rules import RULES
from graphmend.rules.base import ProgramRule
from graphmend.semantics import ModuleIndex

CORPUS = sorted((ROOT / "benchmarks" / "recompile_corpus").glob("*.py"))
FIXTURE_CASES = sorted(p for p in FIXTURES.glob("GM60*/*.py") if not p.name.endswith((".in.py", ".out.py")))


def marked_lines(program: Path) -> set[int]:
    """Lines marked `# recompile: <cause>` (the corpus) or `# expect: GM60x` (the fixtures)."""
    found = set()
    for number, text in enumerate(program.read_text(encoding="utf-8").splitlines(), 1):
        if "# recompile:" in text or "# expect: GM60" in text:
            found.add(number)
    return found


def predicted_lines(program: Path) -> set[int]:
    text = program.read_text(encoding="utf-8")
    return {
        d.range.start.line + 1 for d in check_source(text, program, Settings(runs=False)) if d.code.startswith("GM6")
    }


def test_the_corpus_has_what_the_issue_asks() -> None:
    """At least 25 programs: 15 that recompile (every cause, three libraries' idioms), 10 that do not."""
    recompiling = [p for p in CORPUS if marked_lines(p)]
    causes = {
        text.rsplit("# recompile:", 1)[1].strip()
        for p in recompiling
        for text in p.read_text().splitlines()
        if "# recompile:" in text
    }
    assert len(CORPUS) >= 25 and len(recompiling) >= 15 and len(CORPUS) - len(recompiling) >= 10
    assert causes == {"number", "state", "compile", "mode", "shape"}
    assert {
        "library_transformers_generate.py",
        "library_scheduler_optimizer_step.py",
        "shape_dataloader_last_batch.py",
    } <= {p.name for p in recompiling}


@pytest.mark.parametrize("program", CORPUS, ids=[p.stem for p in CORPUS])
def test_the_rules_predict_the_marked_lines(program: Path) -> None:
    assert predicted_lines(program) == marked_lines(program)


def _recorded_lines(program: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> set[int | None]:
    torch = pytest.importorskip("torch")
    import graphmend
    from graphmend import api
    from graphmend.record.runs import placed

    compile_ = torch.compile

    @functools.wraps(compile_)
    def eager(model=None, **options):  # noqa: ANN001, ANN202 - torch.compile's own signature
        options["backend"] = "eager"
        return compile_(model, **options) if model is not None else compile_(**options)

    monkeypatch.setattr(torch, "compile", eager)
    torch._dynamo.reset()
    with graphmend.recording(scratch / program.stem) as run:
        runpy.run_path(str(program), run_name="__main__")
    torch._dynamo.reset()
    return {
        (user["line"] if user else None)
        for event in api.read_run(run).events
        if event.kind == "recompile"
        for user, _ in [placed(event, program.parent)]
    }


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "program", CORPUS + FIXTURE_CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS + FIXTURE_CASES]
)
def test_a_recorded_run_recompiles_at_the_marked_lines(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marks are Dynamo's truth (torch 2.13): a rule predicting them predicts the run."""
    if program.name.startswith("library_transformers") or program.name == "library_greedy_decode.py":
        pytest.importorskip("transformers")
    assert _recorded_lines(program, tmp_path, monkeypatch) == marked_lines(program)


def test_a_prediction_is_confirmed_by_the_run_or_said_not_met(tmp_path: Path) -> None:
    """With a recorded run, a predicted recompile the run met carries its count; one in code the run
    compiled without recompiling there is marked not met (count 0); the run's recompile at a predicted
    line is not reported again as GM502."""
    case = FIXTURES / "GM601" / "confirmed_by_the_run.py"
    path = with_recorded_run(case, tmp_path)
    found = check_source(path.read_text(), path, Settings())
    assert [(d.code, d.data.run.count if d.data.run else None) for d in found] == [("GM601", 1)]

    process = next((tmp_path / "project" / ".graphmend" / "runs").glob("*/process-1.jsonl"))
    header = process.read_text().splitlines()[0]
    compiled = {"closed": {"compiles": 1, "compiled": [f"{path}:4"]}}  # the decorator's line: co_firstlineno
    process.write_text(header + "\n" + json.dumps(compiled) + "\n")
    ended = process.with_name("run.json")
    os.utime(ended, (ended.stat().st_mtime + 5,) * 2)  # a run read again only when its run.json changes
    found = check_source(path.read_text(), path, Settings())
    assert [(d.code, d.data.run.count if d.data.run else None) for d in found] == [("GM601", 0)]


ODD_PROGRAMS = [
    "import torch\ntorch.compile()\n",
    "import torch\nf = torch.compile(backend='eager')\nfor i in range(3):\n    f(lambda: i)()\n",
    "import torch\nfor i in range(3):\n    torch.compile(*args)(i)\n",
    "import torch\n@torch.compile\ndef f(*a, **k):\n    return a\nfor i in range(3):\n    f(*[i], **{'k': i})\n",
    "import torch\nm = torch.compile(m)\nwhile True:\n    m.x = m.x + 1\n    m(1)\n",
    "import torch\nfor x in y:\n    torch.compile(nn.Linear(x))(x.shape)\n",
    "import torch\ndef f():\n    return f()\ng = torch.compile(f)\nfor i in range(2):\n    g(i)\n",
    # a number read in its own update, and two names defined by each other
    "import torch\n@torch.compile\ndef f(x, e):\n    return x * e\ne = 1.0\nfor _ in range(3):\n    f(1, e)\n    e = max(0.1, e * 0.9)\n",
    "import torch\n@torch.compile\ndef f(x, a):\n    return x * a\na = b = 1\nfor _ in range(3):\n    a = b + 1\n    b = a * 2\n    f(1, a)\n",
    # slices of every form, a conditional expression, a random draw
    "import torch, random\nm = torch.compile(m)\nfor s in range(3):\n    n = 2 if s else random.choice([1, 2])\n"
    "    x = d[:n] + d[s:] + d[::2] + d[s : s + n : 2]\n    m(x, n < 2)\n",
]


@pytest.mark.parametrize(
    "text", ODD_PROGRAMS + [p.read_text(encoding="utf-8") for p in CORPUS + FIXTURE_CASES], ids=lambda t: t[:40]
)
def test_no_rule_raises(text: str) -> None:
    """Each rule reads forms it does not understand without an exception: the checker drops a
    failing rule's predictions silently (a user never sees a traceback), so here each is called
    directly, on odd forms and on every program of the corpus and the fixtures."""
    index = ModuleIndex(ast.parse(text), "m", False, frozenset())
    program = Program(
        index, CompiledRegions(index), text.splitlines(), compile_call_lines(text, text.splitlines(), index)
    )
    values = Values(program)
    for rule in RULES:
        if issubclass(rule, ProgramRule):
            list(rule().predict(program, values))
