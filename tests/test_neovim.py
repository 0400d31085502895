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
from conftest import ROOT

NVIM = shutil.which("nvim")
SERVER = Path(sys.executable).with_name("graphmend-lsp")

if NVIM is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must install neovim (.ci/run does: apt-get install neovim)")
    pytest.skip("neovim is not installed (apt-get install neovim)", allow_module_level=True)


def test_neovim_gets_diagnostics_and_applies_the_quick_fix(tmp_path: Path) -> None:
    target = tmp_path / "figure1.py"
    target.write_text((ROOT / "examples" / "figure1.py").read_text(encoding="utf-8"), encoding="utf-8")
    result_path = tmp_path / "result.json"
    environment = {
        **os.environ,
        "GRAPHMEND_FILE": str(target),
        "GRAPHMEND_RESULT": str(result_path),
        "GRAPHMEND_NVIM_CONFIG": str(ROOT / "editors" / "neovim" / "plugin" / "graphmend.lua"),
        "PATH": f"{SERVER.parent}{os.pathsep}{os.environ.get('PATH', '')}",  # graphmend-lsp as documented
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    assert NVIM is not None
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {ROOT / 'tests' / 'neovim_quickfix.lua'}"],
        env=environment,
        timeout=120,
        check=False,
        capture_output=True,
    )
    result = json.loads(result_path.read_text())
    assert "error" not in result, result.get("error")
    assert [(d["code"], d["line"], d["col"], d["source"]) for d in result["diagnostics"]] == [
        ("GM101", 9, 7, "graphmend")
    ]
    assert result["applied"] and "torch.where" in result["title"]
    fixed = target.read_text(encoding="utf-8")
    assert "z = torch.where(cond, z_if, z_else)" in fixed and "if x.sum() > 10" not in fixed
    ast.parse(fixed)
