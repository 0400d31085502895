"""Shared test helpers: the repository layout and fixture discovery."""

from __future__ import annotations

from pathlib import Path

from graphmend.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "tests" / "dynamo_corpus"


def run(capsys, *args: str) -> tuple[int, str, str]:  # noqa: ANN001
    """`graphmend ARGS` in this process: exit status, stdout, stderr."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def with_recorded_run(case: Path, tmp_path: Path) -> Path:
    """A GM5xx fixture (`case` with a `<case>.run.jsonl` beside it) copied into a project of its own
    with that run as its newest: `{here}` in the run names the copy. Other fixtures: `case` itself."""
    run = case.with_name(case.name.removesuffix(".in.py").removesuffix(".py") + ".run.jsonl")
    if not run.exists():
        return case
    project = tmp_path / "project"
    (project / ".graphmend" / "runs" / "20261127-000000-1").mkdir(parents=True)
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    copy = project / case.name
    copy.write_bytes(case.read_bytes())
    events = run.read_text(encoding="utf-8").replace("{here}", str(copy))
    (project / ".graphmend" / "runs" / "20261127-000000-1" / "process-1.jsonl").write_text(events, encoding="utf-8")
    return copy
