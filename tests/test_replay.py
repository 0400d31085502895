"""The server survives an editor's keystrokes on 25 real model files, with the transformers package
indexed as its workspace. CI replays a fixed sample in a copy of the package with only the sampled
files' model folders (its index a fifth of the package's); the full mode, `GRAPHMEND_FULL=1`,
replays every modeling file with the whole package indexed, as `python tests/replay.py --all
--index` does."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import replay  # noqa: E402
from conftest import FULL  # noqa: E402


def test_keystroke_replay_on_model_files(tmp_path: Path) -> None:
    if FULL:
        files, workspace = replay.model_files(), replay.package_root()
    else:
        files = replay.sampled_package(random.Random(0).sample(replay.model_files(), 25), tmp_path)
        workspace = tmp_path / "transformers"
    report = asyncio.run(replay.replay(files, edits=6, seed=0, index=workspace))
    assert report.index_message, report.errors
    assert report.files == len(files) and report.edits == 12 * len(files)
    assert report.server_alive
    assert report.errors == []
    assert report.stale_publications == []
    assert report.rss_end_mb <= 1.2 * report.rss_start_mb, (report.rss_start_mb, report.rss_end_mb, report.rss_marks)
