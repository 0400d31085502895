"""Shared test helpers: the repository layout and fixture discovery."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from graphmend.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "tests" / "dynamo_corpus"
# The documented full mode (`GRAPHMEND_FULL=1 pytest`): every inductor proof, every corpus program in
# the context matrix, the long fuzzing and the keystroke replay on every model file. CI runs a fixed
# sample of each.
FULL = os.environ.get("GRAPHMEND_FULL") == "1"


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
    ended = {"argv": ["train.py"], "started": 1795760000.0, "ended": 1795760060.0, "exit_code": 0}
    (project / ".graphmend" / "runs" / "20261127-000000-1" / "run.json").write_text(json.dumps(ended), encoding="utf-8")
    return copy


# The longest files start first (from the CI log's time by test file): under pytest-xdist a long
# file started last would finish alone on one worker while the others idle.
_STARTED_FIRST = ("test_replay.py", "test_transformers.py", "test_fuzz_rewrites.py", "test_record.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order = {name: rank for rank, name in enumerate(_STARTED_FIRST)}
    items.sort(key=lambda item: order.get(item.path.name, len(order)))


# Where the suite's time goes, file by file (setup, call and teardown summed; under pytest-xdist the
# workers' times add up, so the total exceeds the wall time): the CI log shows it after every run.
_SECONDS_BY_FILE: dict[str, float] = defaultdict(float)
_TESTS_BY_FILE: dict[str, int] = defaultdict(int)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::", 1)[0]
    _SECONDS_BY_FILE[module] += report.duration
    if report.when == "call":
        _TESTS_BY_FILE[module] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _SECONDS_BY_FILE:
        return
    total = sum(_SECONDS_BY_FILE.values())
    terminalreporter.section("time by test file")
    for module, seconds in sorted(_SECONDS_BY_FILE.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(
            f"{seconds:8.1f} s {100 * seconds / total:5.1f}% {_TESTS_BY_FILE[module]:5d}  {module}"
        )
    terminalreporter.write_line(f"{total:8.1f} s in all, {sum(_TESTS_BY_FILE.values())} tests")


# The paper's Figure 1 with a difference for its product, whose fix is unsafe since issue 67 (review 7):
# what the tests that need a safe fix run.
SAFE_FIGURE1_PATH = ROOT / "tests" / "data" / "figure1_safe.py"
SAFE_FIGURE1 = SAFE_FIGURE1_PATH.read_text(encoding="utf-8")
