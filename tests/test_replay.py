"""The server survives an editor's keystrokes on 50 real model files, with the transformers package
indexed as its workspace (a fixed sample in CI; the documented longer run replays all of them:
`python tests/replay.py --all --index`)."""

from __future__ import annotations

import asyncio
import random

import pytest

pytest.importorskip("transformers")

import replay  # noqa: E402


def test_keystroke_replay_on_fifty_model_files() -> None:
    files = random.Random(0).sample(replay.model_files(), 50)
    report = asyncio.run(replay.replay(files, edits=6, seed=0, index=True))
    assert report.index_message, report.errors
    assert report.files == 50 and report.edits == 600
    assert report.server_alive
    assert report.errors == []
    assert report.stale_publications == []
    assert report.rss_end_mb <= 1.2 * report.rss_start_mb, (report.rss_start_mb, report.rss_end_mb, report.rss_marks)
