"""`graphmend check` and `fix` against hostile input: byte-level variants of fixable programs,
odd file-system objects, odd names and sizes. The CLI runs as a subprocess with a deadline, so a
hang fails the test instead of stalling the run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

from graphmend.api import fix_source

HANG = 900  # seconds: a CLI run still going then has hung (a guard, not a speed check: benchmarks/ time it)
PROGRAMS = [
    ROOT / "tests" / "data" / "figure1_safe.py",
    ROOT / "examples" / "figure5.py",
    ROOT / "tests" / "fixtures" / "GM101" / "fix_static_prefix.in.py",
    ROOT / "tests" / "fixtures" / "GM202" / "fix_loggers.in.py",
]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "graphmend", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=HANG,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`graphmend {' '.join(args)}` hung")


# ---------------------------------------------------------------------- byte-level variants


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _mixed_endings(text: str) -> str:
    """Every other line break a CRLF: untouched lines must keep theirs."""
    lines = text.split("\n")
    return "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines[:-1])) + lines[-1]


def _tabs(text: str) -> str:
    return "\n".join(_tab_line(line) for line in text.split("\n"))


def _tab_line(line: str) -> str:
    stripped = line.lstrip(" ")
    depth, rest = divmod(len(line) - len(stripped), 4)
    return "\t" * depth + " " * rest + stripped


def _form_feed(text: str) -> str:
    """Form feeds where nothing is ever inserted: at the start of the first line and on a line of
    their own at the end (page breaks, as some style guides use them)."""
    return "\x0c" + text.rstrip("\n") + "\n\x0c\n"


VARIANTS: dict[str, Callable[[str], str]] = {
    "crlf": _crlf,
    "mixed-endings": _mixed_endings,
    "tabs": _tabs,
    "form-feed": _form_feed,
}


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_fixing_a_variant_is_the_variant_of_the_fix(program: Path, variant: str) -> None:
    """fix(variant(src)) == variant(fix(src)): line breaks, indentation and form feeds are kept,
    and what the fix adds follows them."""
    source = program.read_text(encoding="utf-8")
    change = VARIANTS[variant]
    expected = change(fix_source(source, program, unsafe=True).fixed)
    if variant == "mixed-endings":  # untouched lines keep their breaks; added lines take the file's own
        assert fix_source(change(source), program, unsafe=True).fixed.replace("\r\n", "\n") == expected.replace(
            "\r\n", "\n"
        )
        fixed = fix_source(change(source), program, unsafe=True).fixed
        untouched = [line for line in change(source).splitlines(keepends=True) if line in fixed]
        assert all(line in fixed.splitlines(keepends=True) for line in untouched)
        return
    assert fix_source(change(source), program, unsafe=True).fixed == expected


@pytest.mark.parametrize("encoding", ["utf-8-sig", "latin-1"])
def test_encodings_are_kept_on_disk(tmp_path: Path, encoding: str) -> None:
    source = (ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8")
    if encoding == "latin-1":
        source = "# -*- coding: latin-1 -*-\n# café\n" + source
    target = tmp_path / "program.py"
    target.write_bytes(source.encode(encoding))
    result = run("fix", str(target), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") == (encoding == "utf-8-sig")
    text = raw.decode(encoding)
    assert "torch.where" in text
    assert text.startswith(source.split("\n")[0])
    if encoding == "latin-1":
        assert "café" in text


# ---------------------------------------------------------------------- file-system objects


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A source tree with one fixable file and the odd objects of each test."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.py").write_text(
        (ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return source


@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_fifo_named_like_a_python_file_is_skipped(tree: Path, command: str) -> None:
    os.mkfifo(tree / "p.py")
    result = run(command, str(tree), "--verbose", cwd=tree.parent)
    assert result.returncode in (0, 1), result.stderr  # findings (check) or all fixed (fix), never an error
    assert "a.py" in result.stdout
    assert "p.py: not a regular file (a FIFO); skipped" in result.stderr
    named = run(command, str(tree / "p.py"), cwd=tree.parent)
    assert "not a regular file (a FIFO)" in named.stderr


def test_a_socket_named_like_a_python_file_is_skipped(tree: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tree / "s.py"))
        result = run("check", str(tree), "--verbose", cwd=tree.parent)
    finally:
        server.close()
    assert "s.py: not a regular file (a socket); skipped" in result.stderr


def test_links_into_the_tree_are_written_through_and_links_out_are_left_alone(tree: Path, tmp_path: Path) -> None:
    figure1 = (ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8")
    (tree / "target.py").write_text(figure1, encoding="utf-8")
    (tree / "inside.py").symlink_to("target.py")
    outside = tmp_path / "elsewhere.py"
    outside.write_text(figure1, encoding="utf-8")
    (tree / "outside.py").symlink_to(outside)
    (tree / "loop_a.py").symlink_to("loop_b.py")
    (tree / "loop_b.py").symlink_to("loop_a.py")
    (tree / "dangling.py").symlink_to("missing.py")
    result = run("fix", str(tree), "--verbose", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tree / "inside.py").is_symlink() and (tree / "outside.py").is_symlink()
    assert "torch.where" in (tree / "target.py").read_text(encoding="utf-8")
    assert outside.read_text(encoding="utf-8") == figure1
    assert "outside.py: a symbolic link to" in result.stderr and "outside the checked tree" in result.stderr
    assert "dangling.py: a broken symbolic link; skipped" in result.stderr
    assert "loop_a.py" in result.stderr  # a loop of links is reported, not followed forever
    assert result.stdout.count("target.py") + result.stdout.count("inside.py") == 1  # fixed once


def test_an_unreadable_file_is_a_warning_not_a_crash(tree: Path) -> None:
    locked = tree / "locked.py"
    locked.write_text("import torch\n", encoding="utf-8")
    locked.chmod(0)
    try:
        result = run("check", str(tree), cwd=tree.parent)
    finally:
        locked.chmod(0o644)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    if os.geteuid() != 0:  # root reads it anyway
        assert "locked.py: cannot read" in result.stderr


@pytest.mark.parametrize("name", ["with space.py", "new\nline.py", "ünïcödé_模型.py"])
def test_odd_file_names(tree: Path, name: str) -> None:
    odd = tree / name
    odd.write_text((ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8"), encoding="utf-8")
    result = run("check", str(tree), "--output-format", "json", "--no-cache", cwd=tree.parent)
    assert {Path(d["path"]).name for d in json.loads(result.stdout)} == {"a.py", name}
    assert run("fix", str(odd), cwd=tree.parent).returncode == 0
    assert "torch.where" in odd.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- sizes


def test_a_file_over_the_size_limit_gets_one_note_at_once(tree: Path) -> None:
    """Over the limit, one GM002 note and no analysis; `0` lifts the limit. (How long a 4.8 MB file
    takes is `benchmarks/size_scaling.py`'s, not a test's.)"""
    big = tree / "generated.py"
    big.write_text("import torch\n" + "x = 1\n" * 50_000, encoding="utf-8")  # 293 KB
    (tree / "pyproject.toml").write_text("[tool.graphmend]\nmax-file-size-kb = 200\n", encoding="utf-8")
    result = run("check", str(big), "--no-cache", cwd=tree.parent)
    assert "GM002 File too large to analyse: 0.3 MB, over the 200 KB limit" in result.stdout
    (tree / "pyproject.toml").write_text("[tool.graphmend]\nmax-file-size-kb = 0\n", encoding="utf-8")
    assert "GM002" not in run("check", str(big), "--no-cache", cwd=tree.parent).stdout


def test_a_one_megabyte_line_is_fixed(tree: Path) -> None:
    long_line = tree / "long.py"
    values = ", ".join(str(i) for i in range(150_000))
    long_line.write_text(
        f"import torch\n\n\n@torch.compile\ndef f(x: torch.Tensor):\n    values = [{values}]\n"
        "    if x.sum() > 0:\n        x = x + x\n    return x.relu()\n",
        encoding="utf-8",
    )
    assert run("fix", str(long_line), cwd=tree.parent).returncode == 0
    assert "torch.where" in long_line.read_text(encoding="utf-8")


def test_deep_nesting_is_analysed_or_refused_clearly(tree: Path) -> None:
    """88 nested `if`s (near Python's 100-level indentation limit) are all reported; an expression
    too deep for Python's own parser gets GM001, not a traceback."""
    depth = 88
    body = [f"{'    ' * (level + 2)}if x.sum() > {level}:" for level in range(depth)]
    nested = tree / "nested.py"
    nested.write_text(
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        + "\n".join(body)
        + f"\n{'    ' * (depth + 2)}x = x + 1\n        return x\n",
        encoding="utf-8",
    )
    result = run("check", str(nested), "--no-cache", "--output-format", "json", cwd=tree.parent)
    assert [d["code"] for d in json.loads(result.stdout)] == ["GM101"] * depth
    chain = tree / "chain.py"
    chain.write_text("import torch\n\n\ndef f(x):\n    return " + " + ".join(["x"] * 20_000) + "\n", encoding="utf-8")
    result = run("check", str(chain), "--no-cache", cwd=tree.parent)
    assert "GM001 code nested too deeply for Python's parser" in result.stdout
    assert "Traceback" not in result.stderr


def test_added_lines_take_the_files_own_line_break() -> None:
    """A mostly-LF file with one CRLF line where the fix goes: the lines it adds end in LF."""
    source = (ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8")
    fixed = fix_source(source, unsafe=True).fixed
    target_line = next(i for i, line in enumerate(source.splitlines()) if line.lstrip().startswith("if "))
    lines = source.splitlines(keepends=True)
    lines[target_line] = lines[target_line].replace("\n", "\r\n")
    mixed = fix_source("".join(lines), unsafe=True).fixed
    assert fixed != source and mixed.count("\r\n") <= 1
    assert mixed.replace("\r\n", "\n") == fixed


def test_the_cache_folder_ignores_itself(tmp_path: Path) -> None:
    """`check` in a git repository leaves nothing for `git status` but the user's own files: the
    cache folder holds a `.gitignore` of `*` (and a CACHEDIR.TAG), as Ruff's does."""
    (tmp_path / "model.py").write_text((ROOT / "tests" / "data" / "figure1_safe.py").read_text(encoding="utf-8"))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = run("check", "model.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / ".graphmend_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (tmp_path / ".graphmend_cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert status.stdout.splitlines() == ["?? model.py"]


def test_nested_ifs_are_fixed_round_by_round_and_a_bound_says_so(tree: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """Issue 42: `fix` repeats until nothing changes, as Ruff does: six nested `if`s are fixed one
    level per round, inner first; when the rounds run out first, it says what is left to do."""
    from conftest import run as run_in_process

    import graphmend.pipelines

    depth = 6
    body = [f"{'    ' * (level + 2)}if x.sum() > {level}:" for level in range(depth)]
    text = (
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        + "\n".join(body)
        + f"\n{'    ' * (depth + 2)}x = x + x\n        return x.relu()\n"
    )
    nested = tree / "nested.py"
    nested.write_text(text, encoding="utf-8")
    code, out, err = run_in_process(capsys, "fix", str(nested))
    assert (code, err) == (0, "") and f"fixed {depth} graph breaks" in out
    assert "if x.sum()" not in nested.read_text(encoding="utf-8")
    nested.write_text(text, encoding="utf-8")
    monkeypatch.setattr(graphmend.pipelines, "MAX_FIX_ROUNDS", 3)
    code, out, err = run_in_process(capsys, "fix", str(nested))
    assert code == 1 and "fixed 3 graph breaks" in out and "run `graphmend fix` again" in err
