"""Real Neovim (Debian's package, headless) with graphmend-lsp --stdio: diagnostics and a quick fix."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAFE_FIGURE1

NVIM = shutil.which("nvim")
SERVER = Path(sys.executable).with_name("graphmend-lsp")

if NVIM is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must install neovim (.ci/run does: apt-get install neovim)")
    pytest.skip("neovim is not installed (apt-get install neovim)", allow_module_level=True)


def run_neovim(script: str, target: Path, tmp_path: Path) -> dict:
    """Headless Neovim with the shipped plugin, graphmend-lsp on PATH as documented, `script` (in
    tests/) driving it on `target`; what the script wrote as its result."""
    result_path = tmp_path / "result.json"
    environment = {
        **os.environ,
        "GRAPHMEND_FILE": str(target),
        "GRAPHMEND_RESULT": str(result_path),
        "GRAPHMEND_NVIM_CONFIG": str(ROOT / "editors" / "neovim" / "plugin" / "graphmend.lua"),
        "PATH": f"{SERVER.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    assert NVIM is not None
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {ROOT / 'tests' / script}"],
        env=environment,
        timeout=120,
        check=False,
        capture_output=True,
    )
    return json.loads(result_path.read_text())


def test_neovim_gets_diagnostics_and_applies_the_quick_fix(tmp_path: Path) -> None:
    target = tmp_path / "figure1.py"
    target.write_text(SAFE_FIGURE1, encoding="utf-8")
    result = run_neovim("neovim_quickfix.lua", target, tmp_path)
    assert "error" not in result, result.get("error")
    assert [(d["code"], d["line"], d["col"], d["source"]) for d in result["diagnostics"]] == [
        ("GM101", 9, 7, "graphmend")
    ]
    assert result["applied"] and "torch.where" in result["title"]
    fixed = target.read_text(encoding="utf-8")
    assert "z = _exact_where(cond, z_if, z_else)" in fixed and "if x.sum() > 10" not in fixed
    ast.parse(fixed)


UNSAFE_ONLY = (
    "import torch\n\n\n@torch.compile\ndef scale(x: torch.Tensor):\n    n = x.sum().item()\n    return x * n\n"
)


def test_fix_all_with_only_unsafe_fixes_says_so_and_a_dead_server_is_reported(tmp_path: Path) -> None:
    """Issue 39: on a file with no safe fix, Neovim's Fix All showed only "No code actions
    available"; now :GraphmendFixAll shows graphmend's report, naming the command for the unsafe fix,
    and changes nothing. A killed server is reported with vim.notify."""
    target = tmp_path / "scale.py"
    target.write_text(UNSAFE_ONLY, encoding="utf-8")
    result = run_neovim("neovim_fix_all.lua", target, tmp_path)
    assert "error" not in result, result.get("error")
    assert result["reported"], result["messages"]
    assert "graphmend: applied 0 safe fixes; 1 unsafe fix available (:GraphmendFixAllUnsafe)" in result["messages"]
    assert "No code actions available" not in result["messages"]
    assert result["buffer"] + "\n" == UNSAFE_ONLY and target.read_text(encoding="utf-8") == UNSAFE_ONLY
    assert result["exit_reported"], result["messages"]
    assert "graphmend-lsp exited (code" in result["messages"]
