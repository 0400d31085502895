"""The pre-commit hooks (issue 15, item 5), run by real `pre-commit try-repo` on a user's repository:
the check hook fails with the finding, the fix hook rewrites the file and the notebook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

# One pytest-xdist worker runs the whole file: one hooks repository and pre-commit's environments.
pytestmark = pytest.mark.xdist_group("test_pre_commit")

BROKEN = "import torch\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x = x + x\n    return x.relu()\n"  # safe: no number to promote a bool x, no input returned as itself, no product


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory) -> Path:
    """This project's files as they are now (tracked and new, not ignored), committed in a fresh
    repository: what a user's pre-commit would clone at a release tag."""
    repo = tmp_path_factory.mktemp("graphmend-hooks")
    for name in git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0"):
        source = ROOT / name
        if name and source.is_file() and not name.startswith(("tests/", "vscode-extension/", "benchmarks/", "docs/")):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "hooks")
    return repo


def try_repo(hooks_repo: Path, user: Path, hook: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), hook, "--all-files"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_check_hook_fails_and_fix_hook_rewrites(hooks_repo: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "model.py").write_text(BROKEN)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(BROKEN.rstrip("\n"))]
    (user / "nb.ipynb").write_text(nbformat.writes(nb))
    git(user, "init", "-q")
    git(user, "add", "-A")
    home = tmp_path / "pre-commit-home"

    check = try_repo(hooks_repo, user, "graphmend-check", home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "graphmend check" in check.stdout and "Failed" in check.stdout
    assert "model.py:6:8: GM101" in check.stdout and "nb.ipynb:cell 1:6:8: GM101" in check.stdout

    fix = try_repo(hooks_repo, user, "graphmend-fix", home)
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout, fix.stdout + fix.stderr
    assert "_exact_where(cond, x_if, x)" in (user / "model.py").read_text()
    cell = "".join(json.loads((user / "nb.ipynb").read_text())["cells"][0]["source"])
    assert "torch.where(cond, x_if, x)" in cell  # a cell can hold no helper: the plain selection

    git(user, "add", "-A")
    again = try_repo(hooks_repo, user, "graphmend-check", home)
    assert again.returncode == 0 and "Passed" in again.stdout, again.stdout + again.stderr
