"""The core (parse → analysis → rules) imports only the standard library and LibCST."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "server" / "graphmend"
# Fronts, and the notebook reader (nbformat, imported when a notebook is read: a `.py` check never loads it).
FRONTS = {"cli.py", "__main__.py", "verify.py", "notebooks.py", "jupyter.py"}
ALLOWED_THIRD_PARTY = {"libcst", "tomli"}


def core_modules() -> list:
    return [p for p in PACKAGE.rglob("*.py") if "lsp" not in p.relative_to(PACKAGE).parts and p.name not in FRONTS]


def test_core_imports_neither_torch_nor_pygls_at_runtime() -> None:
    code = (
        "import sys, graphmend.api, graphmend.checker, graphmend.rules;"
        "graphmend.api.check_source(open(sys.argv[1]).read());"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'pygls', 'lsprotocol', 'transformers'});"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "examples" / "figure1.py")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_sources_import_only_stdlib_and_libcst() -> None:
    assert len(core_modules()) >= 10
    for path in core_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            foreign = {
                r for r in roots if r not in sys.stdlib_module_names and r not in {*ALLOWED_THIRD_PARTY, "graphmend"}
            }
            assert not foreign, f"{path.relative_to(ROOT)} imports {foreign}"


def test_cli_runs_without_torch_installed(tmp_path) -> None:
    """Hide torch with a meta-path blocker: the CLI still analyses."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ImportError('torch is hidden for this test')\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    env = {"PYTHONPATH": str(tmp_path), "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", str(ROOT / "examples")], capture_output=True, text=True, env=env
    )
    assert result.returncode == 1, result.stderr
    assert "GM101" in result.stdout and "GM201" in result.stdout


def test_without_libcst_the_findings_stay_and_the_predicated_fix_says_what_it_needs(tmp_path) -> None:
    """The server bundled in the VS Code extension runs on the user's Python, which may lack LibCST
    (compiled, so not bundled): every finding is still reported, deferrals are still offered."""
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('libcst', 'torch', 'transformers'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", "--output-format", "json", "--no-cache", str(ROOT / "examples")],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    assert result.returncode == 1, result.stderr
    found = {item["code"]: item for item in json.loads(result.stdout)}
    assert "pip install libcst" in found["GM101"]["no_fix"] and found["GM101"]["fix"] is None
    assert found["GM201"]["fix"]["title"].startswith(("Defer the print", "Keep the print in the graph"))
