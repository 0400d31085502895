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
