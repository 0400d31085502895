"""`graphmend fix`: in-place rewriting, --diff, --unsafe-fixes, exit codes, and never a lost edit."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import SAFE_FIGURE1, run

FIGURE1 = SAFE_FIGURE1
# Unsafe: where the branch does not run, `w` now gets a zero gradient instead of none.
SCALED = """import torch


@torch.compile
def f(x, w):
    if x.sum() > 0:
        x = x * w
    return x
"""


def test_fix_in_place_then_clean(tmp_path: Path, capsys) -> None:
    target = tmp_path / "figure1.py"
    target.write_text(FIGURE1)
    code, out, _ = run(capsys, "fix", str(target))
    assert code == 0 and "fixed 1 graph break" in out
    fixed = target.read_text()
    assert "z = _exact_where(cond, z_if, z_else)" in fixed and "if x.sum() > 10" not in fixed
    ast.parse(fixed)
    assert run(capsys, "check", str(target))[0] == 0
    assert run(capsys, "fix", str(target))[0] == 0 and target.read_text() == fixed


def test_diff_writes_nothing(tmp_path: Path, capsys) -> None:
    target = tmp_path / "figure1.py"
    target.write_text(FIGURE1)
    code, out, err = run(capsys, "fix", "--diff", str(target))
    assert code == 1 and "+    z = _exact_where(cond, z_if, z_else)" in out and "Would fix 1 graph break" in err
    assert target.read_text() == FIGURE1


def test_unsafe_fixes_need_the_flag(tmp_path: Path, capsys) -> None:
    target = tmp_path / "m.py"
    target.write_text(SCALED)
    code, out, _ = run(capsys, "fix", str(target))
    assert code == 1 and "1 fixable with --unsafe-fixes" in out and target.read_text() == SCALED
    code, out, _ = run(capsys, "fix", "--unsafe-fixes", str(target))
    assert code == 0 and "x = _exact_where(cond, x_if, x)" in target.read_text()


def test_unparsable_file_is_never_touched(tmp_path: Path, capsys) -> None:
    target = tmp_path / "broken.py"
    target.write_text(FIGURE1.replace("def f(x, y):", "def f(x, y:"))
    before = target.read_bytes()
    code, _, err = run(capsys, "fix", str(target))
    assert "does not parse; not changed" in err and target.read_bytes() == before
    assert code == 1


def test_line_endings_encoding_and_mode_are_kept(tmp_path: Path, capsys) -> None:
    target = tmp_path / "crlf.py"
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIGURE1
    target.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    target.chmod(0o640)
    assert run(capsys, "fix", str(target))[0] == 0
    data = target.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert "café".encode("latin-1") in data and b"torch.where" in data
    assert (target.stat().st_mode & 0o777) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".graphmend")]


def test_fix_reports_refusals_as_remaining(tmp_path: Path, capsys) -> None:
    target = tmp_path / "m.py"
    target.write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x.add_(1)\n    return x\n"
    )
    code, out, _ = run(capsys, "fix", "--unsafe-fixes", str(target))
    assert code == 1 and "Fixed 0 graph breaks; 1 remaining." in out
    assert "= note: no automatic fix: a branch changes a tensor in place" in run(capsys, "check", str(target))[1]


def test_fix_runs_on_jobs_and_skips_files_checked_clean_of_fixes(tmp_path: Path, capsys, monkeypatch) -> None:
    """Issue 40: `fix` has `--jobs` and `check`'s cache: a file whose cached diagnostics hold no fix to
    apply is not analysed again (here: fix_source must not run for it); the others are fixed."""
    from graphmend import pipelines

    (tmp_path / "figure1.py").write_text(FIGURE1)
    (tmp_path / "unsafe_only.py").write_text(SCALED)
    cache = tmp_path / "cache"
    assert run(capsys, "check", "--cache-dir", str(cache), "--jobs", "1", str(tmp_path))[0] == 1
    fixed_texts: list[str] = []
    real_fix_source = pipelines.fix_source

    def counting_fix_source(text: str, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        fixed_texts.append(text)
        return real_fix_source(text, *args, **kwargs)

    monkeypatch.setattr(pipelines, "fix_source", counting_fix_source)  # what fix_file calls
    code, out, _ = run(capsys, "fix", "--cache-dir", str(cache), "--jobs", "1", str(tmp_path))
    assert code == 1 and "figure1.py: fixed 1 graph break" in out and "1 fixable with --unsafe-fixes" in out
    assert fixed_texts == [FIGURE1]  # the file with only an unsafe fix came from the cache
    assert (tmp_path / "unsafe_only.py").read_text() == SCALED
    code, out, _ = run(capsys, "fix", "--no-cache", "--jobs", "2", "--unsafe-fixes", str(tmp_path))
    assert code == 0 and "unsafe_only.py: fixed 1 graph break" in out
