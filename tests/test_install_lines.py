"""Every shell line of the user-facing docs that installs graphmend or an editor part is true
(issue 39: `pip install graphmend` was written in three places and there is no such package).

The lines are collected from the docs (fenced shell blocks, and inline code in prose), so a new one
fails here until it is given a check below: run in a fresh virtual environment on a copy of this
checkout (the wheel line builds the wheel CI checks); or, where it needs root, npm or the test
suite itself, shown to be what `.ci/run` runs. A check whose line left the docs fails too.
benchmarks/README.md is left out: its lines build the measurement environments, not graphmend's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import venv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "editors").glob("*/README.md")),
    ROOT / "vscode-extension" / "README.md",
    ROOT / "tests" / "README.md",
]
INSTALLS = re.compile(
    r"\bpip (install|wheel)\b|\bnpm (ci|install|run package)\b|\bapt-get install\b|\bcp editors/|--install-extension"
)
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def doc_lines() -> Iterator[tuple[str, str]]:
    """(where, command) for each install line: fenced `bash`/`sh` blocks line by line (comments
    dropped), and inline code spans in prose."""
    for page in DOCS:
        fenced = None
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fenced = None if fenced is not None else stripped[3:].strip()
                continue
            where = f"{page.relative_to(ROOT)}:{number}"
            if fenced in ("bash", "sh", "shell", "console"):
                command = stripped.removeprefix("$ ").split("  #")[0].split(" # ")[0].strip()
                if INSTALLS.search(command):
                    yield where, command
            elif fenced is None:
                for span in re.findall(r"`([^`]+)`", line):
                    if INSTALLS.search(span) and " " in span.strip():
                        yield where, span.strip()


@dataclass(frozen=True)
class Check:
    """How a doc line is shown true: `run` it (a fresh environment, then `then` on it), or the
    reason it is not run here and the text `.ci/run` must hold for it."""

    run: bool = False
    then: Callable[[Path, dict[str, str]], None] | None = None
    exit_code: int = 0
    dry_run: str | None = None  # run with pip's --dry-run, and why
    reason: str = ""
    in_ci: tuple[str, ...] = ()


def graphmend_runs(copy: Path, env: dict[str, str]) -> None:
    """The installed commands are the fresh environment's: the server starts, `check` finds Figure 1's break."""
    bin_dir = Path(env["VIRTUAL_ENV"]) / "bin"
    server = subprocess.run([bin_dir / "graphmend-lsp", "--version"], env=env, capture_output=True, text=True)
    assert server.returncode == 0 and server.stdout.startswith("graphmend-lsp "), server
    check = subprocess.run(
        [bin_dir / "graphmend", "check", "examples/figure1.py"], cwd=copy, env=env, capture_output=True, text=True
    )
    assert check.returncode == 1 and "GM101" in check.stdout, check


def neovim_loads_the_plugin(copy: Path, env: dict[str, str]) -> None:
    plugin = Path(env["HOME"]) / ".config" / "nvim" / "plugin" / "graphmend.lua"
    assert plugin.read_bytes() == (ROOT / "editors" / "neovim" / "plugin" / "graphmend.lua").read_bytes()
    if shutil.which("nvim") is None:
        return  # the copy is the install; test_neovim loads the plugin where Neovim is
    result = subprocess.run(
        ["nvim", "--headless", "-c", "lua io.stdout:write(tostring(vim.g.loaded_graphmend))", "-c", "qa!"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout == "true", result


NEEDS_ROOT = "installs a Debian package as root"
README_1 = "README command 1, which .ci/run runs first on the clean clone (installed once, not again here)"
JUPYTERLAB = "the JupyterLab e2e's environment is made with it by .ci/run (pinned), and the e2e finds graphmend in it"
JUPYTERLAB_PINNED = (
    "PIP_CONSTRAINT=editors/jupyterlab/tested-versions.txt python3 -m pip install jupyterlab jupyterlab-lsp ."
)
THE_SUITE = "it is the test suite itself"
NPM = "needs npm and Node.js; .ci/run builds and tests the extension"
CHECKS: dict[str, Check] = {
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/graphmend check examples/": Check(
        reason=README_1,
        in_ci=("python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/graphmend check examples/",),
    ),
    "apt-get install -y neovim": Check(reason=NEEDS_ROOT, in_ci=("apt-get install -y -qq neovim",)),
    "apt-get install neovim": Check(reason=NEEDS_ROOT, in_ci=("apt-get install -y -qq neovim",)),
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest": Check(
        reason=THE_SUITE, in_ci=("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest",)
    ),
    "pip install -e '.[test]'": Check(reason=THE_SUITE, in_ci=(".venv/bin/pip install -e '.[test]'",)),
    "python3 -m pip install .": Check(run=True, then=graphmend_runs),
    "pip install -e .": Check(reason=README_1, in_ci=(".venv/bin/pip install -e .",)),
    "python3 -m pip wheel --no-deps . -w dist && python3 -m pip install dist/graphmend-*.whl": Check(
        run=True, then=graphmend_runs
    ),
    "python3 -m pip install '.[verify]'": Check(
        run=True, dry_run="torch is 0.7 GB; the resolution is what can be false"
    ),
    "cd vscode-extension && npm ci && npm run package": Check(reason=NPM, in_ci=("npm ci", "npm run package")),
    "npm ci": Check(reason=NPM, in_ci=("npm ci",)),
    "npm run package": Check(reason=NPM, in_ci=("npm run package",)),
    "mkdir -p ~/.config/nvim/plugin && cp editors/neovim/plugin/graphmend.lua ~/.config/nvim/plugin/": Check(
        run=True, then=neovim_loads_the_plugin
    ),
    "python3 -m pip install jupyterlab jupyterlab-lsp .": Check(
        reason=JUPYTERLAB, in_ci=("python3 -m pip install jupyterlab jupyterlab-lsp .",)
    ),
    JUPYTERLAB_PINNED: Check(reason=JUPYTERLAB, in_ci=(JUPYTERLAB_PINNED,)),
}
FOUND: dict[str, list[str]] = {}
for _where, _command in doc_lines():
    FOUND.setdefault(_command, []).append(_where)


def test_the_docs_have_install_lines_and_each_has_a_check() -> None:
    assert "python3 -m pip install ." in FOUND and len(FOUND) >= 6
    unchecked = {command: where for command, where in FOUND.items() if command not in CHECKS}
    assert not unchecked, f"install lines with no check here (add one to CHECKS): {unchecked}"
    stale = set(CHECKS) - set(FOUND)
    assert not stale, f"checks whose line is no longer in the docs: {stale}"


def test_no_line_installs_graphmend_from_pypi() -> None:
    """There is no `graphmend` on PyPI: a line naming it as a package is false."""
    from_pypi = {c: w for c, w in FOUND.items() if re.search(r"\bpip install\b[^#]*\sgraphmend(\s|$|\[)", c)}
    assert not from_pypi


@pytest.mark.parametrize("command", sorted(c for c in FOUND if c in CHECKS and not CHECKS[c].run))
def test_a_line_not_run_here_is_what_ci_runs(command: str) -> None:
    check = CHECKS[command]
    assert check.reason and check.in_ci
    assert all(text in CI for text in check.in_ci), f"{FOUND[command]}: .ci/run does not run {check.in_ci}"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files (tracked, and new ones git does not ignore), as a clone has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    copy = tmp_path_factory.mktemp("clone")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy


@pytest.mark.parametrize("command", sorted(c for c in FOUND if c in CHECKS and CHECKS[c].run))
def test_a_line_run_in_a_fresh_environment_does_what_it_says(command: str, checkout: Path, tmp_path: Path) -> None:
    check = CHECKS[command]
    copy = tmp_path / "clone"
    shutil.copytree(checkout, copy)
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    env = {
        **os.environ,
        "PATH": f"{environment / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(environment),
        "HOME": str(tmp_path / "home"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    }
    env.pop("PYTHONPATH", None)
    line = command.replace("pip install ", "pip install --dry-run ") if check.dry_run else command
    result = subprocess.run(["bash", "-c", line], cwd=copy, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == check.exit_code, (
        f"{FOUND[command]}: {command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    if check.then is not None:
        check.then(copy, env)
