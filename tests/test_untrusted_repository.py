"""A hostile repository (issue 68): the user clones it and runs `graphmend check` / `fix`, or opens it
in the editor. What it ships (proof records, settings, run files, a cache, links, FIFOs, JSON of any
shape) never makes graphmend apply an unsafe fix, hang, fill memory, read outside the project, or
write through a link; a proof counts only when this user's graphmend signed it. Each check runs
`graphmend` in a process of its own with an audit hook on `open` and its peak memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import audited
import pytest
from conftest import ROOT

from graphmend import untrusted
from graphmend.signing import signed, signed_by_this_user

PROGRAM = ROOT / "tests" / "prove_programs" / "no_grad_if"
OUTSIDE = ("/etc/passwd", "/etc/hosts", "/dev/zero")


def _graphmend(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    return audited.graphmend(project, *arguments, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "cloned"
    shutil.copytree(PROGRAM, root)
    return root


def _proof(project: Path, verdict: str = "proved", sign: bool = True, run_folder: bool = True) -> Path:
    """A proof record for the project's one fix, as a repository could ship it (`sign=False`) or
    as this user's `fix --prove` writes it."""
    from graphmend.prove.candidates import find_candidates

    (candidate,) = find_candidates([project], unsafe=True)
    folder = project / ".graphmend" / "proofs" / "20261207-120000-1"
    folder.mkdir(parents=True, exist_ok=True)
    if run_folder:
        (folder / "original").mkdir(exist_ok=True)
    record = {
        "command": ["python", "train.py"],
        "ended": 1.0e9,
        "processes": 1,
        "steps": 40,
        "calls": 40,
        "runs": [{"folder": "original", "fixes": [], "exit_code": 0, "seconds": 1.0}],
        "fixes": [
            {"path": "model.py", "line": candidate.line, "fix_hash": candidate.fix_hash, "verdict": verdict}
            | {"differences": []}
        ],
    }
    (folder / "proof.json").write_text(json.dumps(signed(record) if sign else record), encoding="utf-8")
    return folder / "proof.json"


def _verdict(project: Path) -> str | None:
    from graphmend.pipelines import check_source

    model = project / "model.py"
    (finding,) = check_source(model.read_text(encoding="utf-8"), model)
    return finding.data.proof.verdict if finding.data.proof is not None else None


# ---------------------------------------------------------------------------------------- proofs
def test_a_shipped_proof_and_setting_apply_no_unsafe_fix(project: Path) -> None:
    """The high one: an unsigned proof plus `apply-proved-fixes = true` in the repository's
    pyproject.toml. Plain `fix` applies nothing, says it ignored the setting, and `check` shows no
    verdict; even with the user's own flag the forged proof counts for nothing."""
    _proof(project, sign=False)
    with open(project / "pyproject.toml", "a", encoding="utf-8") as settings:
        settings.write("\n[tool.graphmend]\napply-proved-fixes = true\n")
    before = (project / "model.py").read_text(encoding="utf-8")
    done = _graphmend(project, "fix", "--no-cache", ".")
    assert "Fixed 0 graph breaks" in done.stdout, done.stdout + done.stderr
    assert "`apply-proved-fixes` is not taken from a project's settings" in done.stderr
    flagged = _graphmend(project, "fix", "--no-cache", "--apply-proved-fixes", ".")
    assert "Fixed 0 graph breaks" in flagged.stdout
    assert (project / "model.py").read_text(encoding="utf-8") == before
    assert _verdict(project) is None
    check = _graphmend(project, "check", "--no-cache", ".")
    assert "proved on your run" not in check.stdout


def test_a_proof_counts_only_signed_by_this_user_whole_and_beside_its_runs(project: Path) -> None:
    path = _proof(project)
    assert _verdict(project) == "proved"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["fixes"][0]["verdict"] = "proved"
    record["steps"] = 4000  # any change to what was signed
    path.write_text(json.dumps(record), encoding="utf-8")
    assert not signed_by_this_user(record) and _verdict(project) is None
    shutil.rmtree(project / ".graphmend")
    _proof(project, run_folder=False)  # signed, but no run left its folder: not a proof that ran
    assert _verdict(project) is None


@pytest.mark.parametrize("ended", ["1e400", "NaN", "-Infinity"])
def test_a_record_with_a_number_out_of_range_is_ignored_and_json_stays_json(project: Path, ended: str) -> None:
    path = _proof(project)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"ended": 1000000000.0', f'"ended": {ended}'), encoding="utf-8")
    done = _graphmend(project, "check", "--no-cache", "--output-format", "json", ".")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    json.loads(done.stdout, parse_constant=lambda constant: pytest.fail(f"{constant} in the JSON output"))


# --------------------------------------------------------------------------- run and proof files
@pytest.mark.parametrize("name", ["proof", "run"])
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/etc/passwd"])
def test_a_fifo_or_a_link_as_a_record_is_not_read(project: Path, name: str, kind: str) -> None:
    """A FIFO would block `check` forever; a link to /dev/zero would fill memory; a link to
    /etc/passwd would be opened."""
    if name == "proof":
        target = _proof(project)
    else:
        run = project / ".graphmend" / "runs" / "20261207-120000-1"
        run.mkdir(parents=True)
        (run / "process-1.jsonl").write_text("", encoding="utf-8")
        target = run / "run.json"
    target.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(kind)
    done = _graphmend(project, "check", "--no-cache", ".")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert not [p for p in audited.opened(done) if p in OUTSIDE or p == str(target)], audited.opened(done)
    assert audited.peak_mb(done) < 300


def test_one_deeply_nested_json_line_costs_only_itself(project: Path) -> None:
    """A run file, a proof and a notebook each holding JSON nested 100,000 deep: `check` reports the
    project's findings as without them (RecursionError once ended the whole run)."""
    deep = "[" * 100_000 + "]" * 100_000
    run = project / ".graphmend" / "runs" / "20261207-120000-1"
    run.mkdir(parents=True)
    (run / "process-1.jsonl").write_text(deep + "\n", encoding="utf-8")
    (run / "run.json").write_text(deep, encoding="utf-8")
    proofs = project / ".graphmend" / "proofs" / "x"
    (proofs / "original").mkdir(parents=True)
    (proofs / "proof.json").write_text(deep, encoding="utf-8")
    (project / "deep.ipynb").write_text('{"nbformat": 4, "cells": ' + deep + "}", encoding="utf-8")
    done = _graphmend(project, "check", "--no-cache", "--output-format", "json", ".")
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert {finding["path"] for finding in json.loads(done.stdout)} == {"model.py"}
    with pytest.raises(ValueError):
        untrusted.loads(deep)


def test_a_run_naming_files_outside_the_project_reads_none_of_them(project: Path) -> None:
    """runStatus looks for each event's line in its file: only a regular file in the project."""
    from graphmend.record.newest import read_text

    assert read_text("/etc/passwd", project) is None
    os.mkfifo(project / "fifo.py")
    assert read_text(str(project / "fifo.py"), project) is None  # without blocking
    assert read_text(str(project / "model.py"), project) is not None


# ------------------------------------------------------------------------------ cache and links
def test_a_linked_cache_folder_is_neither_read_nor_written(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".graphmend_cache").symlink_to(elsewhere)
    done = _graphmend(project, "check", ".")
    assert done.returncode == 1, done.stderr
    assert list(elsewhere.iterdir()) == []  # no CACHEDIR.TAG, .gitignore or entry written through the link


def test_linked_folders_inside_the_cache_are_not_written_through(project: Path, tmp_path: Path) -> None:
    """The cache's own `diagnostics` and `summaries` folders shipped as links (the security pass
    after issue 68's first part: empty folders were still made through them)."""
    assert _graphmend(project, "check", ".").returncode == 1
    (version,) = (project / ".graphmend_cache").glob("*-*")
    for kind in ("diagnostics", "summaries"):
        shutil.rmtree(version / kind)
        (tmp_path / kind).mkdir()
        (version / kind).symlink_to(tmp_path / kind)
    (project / "model.py").write_text((project / "model.py").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert _graphmend(project, "check", ".").returncode == 1
    assert not list((tmp_path / "diagnostics").iterdir()) and not list((tmp_path / "summaries").iterdir())


def test_a_planted_cache_entry_hides_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key carries this user's salt: an entry planted under a key a repository can compute
    (from the file, its path in CI, the settings and graphmend's version) is never looked up."""
    from graphmend import cache
    from graphmend.settings import Settings

    store = cache.Cache(project / ".graphmend_cache")
    model = project / "model.py"
    salted = store.key(model, model.read_bytes(), Settings(), None)
    monkeypatch.setattr(cache, "_salt", lambda: b"")
    assert cache.user_salt() and store.key(model, model.read_bytes(), Settings(), None) != salted


# ------------------------------------------------------------------------------------ the editor
def test_hover_text_from_a_run_or_a_proof_is_plain_markdown() -> None:
    """A run's reason or a proof's command cannot fetch an image or make a link in the hover."""
    from dataclasses import replace

    from graphmend.api import check_source
    from graphmend.diagnostics import ProofSeen
    from graphmend.lsp.hover import hover_text

    text = (PROGRAM / "model.py").read_text(encoding="utf-8")
    (finding,) = check_source(text, PROGRAM / "model.py")
    image = "![x](https://attacker.example/pixel.png) [click](https://attacker.example)"
    proof = ProofSeen("differs", f"python `x` {image}", 1, 3, 3, 1.0e9, (image,))
    data = replace(finding.data, dynamo=image, proof=proof, guard=f"`{image}")
    shown = hover_text(replace(finding, data=data), text.splitlines())
    assert "](https://attacker" not in shown and "<https://attacker" not in shown
    assert shown.count("](") == (1 if finding.url else 0)  # Dynamo's page, the one link


def test_an_editor_cannot_turn_on_applying_proved_fixes() -> None:
    from graphmend.lsp.options import parse_options

    options = parse_options({"graphmend": {"applyProvedFixes": True}})
    assert "apply-proved-fixes" not in options.overrides
    assert any("applyProvedFixes" in problem for problem in options.problems)


# ------------------------------------------------------------------------------- fix --prove's run
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_prove_owns_its_command_as_record_does(project: Path, signal_name: str) -> None:
    """SIGTERM (or SIGINT, to graphmend alone) to `graphmend fix --prove` reaches the command (its
    own process group), graphmend exits 128 + N once it has ended (SIGINT gave 2 with no word), and
    no orphan is left; nothing is applied."""
    import signal
    import time

    sent = getattr(signal, signal_name)

    (project / "train.py").write_text(
        "import os, time\nopen('started', 'w').write(str(os.getpid()))\ntime.sleep(120)\n", encoding="utf-8"
    )
    before = (project / "model.py").read_text(encoding="utf-8")
    proving = subprocess.Popen(
        [sys.executable, "-m", "graphmend", "fix", "--prove", "--unsafe-fixes", "--", sys.executable, "train.py"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):
        if (project / "started").exists() and (project / "started").read_text():
            break
        time.sleep(0.1)
    command = int((project / "started").read_text())
    proving.send_signal(sent)
    assert proving.wait(timeout=60) == 128 + sent
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(command, 0)  # ended with graphmend, not left running
    assert (project / "model.py").read_text(encoding="utf-8") == before


# ------------------------------------------------------------------------------ settings and roots
@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs to give a file to another user")
def test_settings_and_records_another_user_planted_above_are_not_the_users_project(tmp_path: Path) -> None:
    """A folder of scripts with no pyproject.toml or .git, in a shared folder where another user
    planted `pyproject.toml` (turning every rule off) one level up: neither is the user's (as git
    refuses a repository another user owns), so the scripts are checked with the defaults."""
    from graphmend.record.runs import project_root

    shared = tmp_path / "shared"
    scripts = shared / "mine"
    shutil.copytree(PROGRAM, scripts)
    (scripts / "pyproject.toml").unlink()
    planted = shared / "pyproject.toml"
    planted.write_text('[tool.graphmend]\nignore = ["GM"]\n', encoding="utf-8")
    os.chown(planted, 4242, 4242)
    assert project_root(scripts) == scripts.resolve()
    done = _graphmend(scripts, "check", "--no-cache", ".")
    assert done.returncode == 1, done.stdout + done.stderr  # the finding is reported
    os.chown(planted, os.getuid(), os.getgid())
    assert project_root(scripts) == shared.resolve()  # the user's own file one level up is theirs
    assert _graphmend(scripts, "check", "--no-cache", ".").returncode == 0


def test_a_projects_library_paths_reach_only_the_project_and_the_interpreter(project: Path) -> None:
    """`library-paths = ["/etc"]` in the repository's settings: not searched (nothing there opened),
    and `check` says it did not take it; the command line's `--library-path` still would."""
    with open(project / "pyproject.toml", "a", encoding="utf-8") as settings:
        settings.write('\n[tool.graphmend]\nfollow-libraries = true\nlibrary-paths = ["/etc", ".venv/lib"]\n')
    done = _graphmend(project, "check", "--no-cache", ".")
    assert done.returncode == 1, done.stderr
    assert "`library-paths` outside the project and the interpreter's libraries are not taken" in done.stderr
    assert "(/etc)" in done.stderr  # the project's own `.venv/lib` is kept
    assert not [p for p in audited.opened(done) if p.startswith("/etc")]


def test_a_python_file_linking_out_of_the_project_is_not_read(project: Path, tmp_path: Path) -> None:
    """`helpers.py -> ../outside/secret.py` beside the user's script: neither checked nor read for
    the project's summaries (issue 68: it was skipped in words, and opened)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import torch\nTOKEN = 'do not read'\n", encoding="utf-8")
    (project / "helpers.py").symlink_to(outside / "secret.py")
    done = _graphmend(project, "check", "--no-cache", ".")
    assert done.returncode == 1, done.stderr
    assert not [p for p in audited.opened(done) if p.endswith(("helpers.py", "secret.py"))]


def test_a_projects_size_limit_cannot_lift_the_cap(project: Path) -> None:
    """`max-file-size-kb = 0` in the repository's settings with a 4.5 MB file it ships: the file is
    still skipped (GM002, one note at once, not minutes of analysis) and `check` says why; the
    user's own `--max-file-size-kb 0` analyses it, and then nothing is said about the project's."""
    with open(project / "pyproject.toml", "a", encoding="utf-8") as settings:
        settings.write("\n[tool.graphmend]\nmax-file-size-kb = 0\n")
    (project / "huge.py").write_text(
        "import torch\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x\n"
        + "# "
        + "x" * (4_600 * 1024)
        + "\n",
        encoding="utf-8",
    )
    done = _graphmend(project, "check", "--no-cache", "huge.py")
    assert "GM002" in done.stdout and "GM101" not in done.stdout, done.stdout
    assert "`max-file-size-kb` = 0 is not taken from a project's settings" in done.stderr
    lifted = _graphmend(project, "check", "--no-cache", "--max-file-size-kb", "0", "huge.py")
    assert "GM101" in lifted.stdout and "GM002" not in lifted.stdout, lifted.stdout
    assert "max-file-size-kb" not in lifted.stderr


# ------------------------------------------------------------------------------- writes and retention
@pytest.mark.parametrize("linked", [".graphmend", ".graphmend/runs"])
def test_record_writes_no_run_through_a_shipped_link(project: Path, tmp_path: Path, linked: str) -> None:
    """`.graphmend` (or its `runs`) shipped as a link to a folder elsewhere: `record` says so and
    exits 2, and nothing is written there (it made its run folders and `.gitignore` through it)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / linked).parent.mkdir(parents=True, exist_ok=True)
    (project / linked).symlink_to(elsewhere)
    done = _graphmend(project, "record", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2, done.stderr
    assert "a link or another user's folder; graphmend writes nothing through it" in done.stderr
    assert not list(elsewhere.iterdir())


def _stamped(folder: Path, name: str, finished: str | None, age_days: float = 0.0) -> Path:
    run = folder / name
    run.mkdir(parents=True)
    if finished:
        (run / finished).write_text("{}", encoding="utf-8")
    when = __import__("time").time() - age_days * 86_400
    os.utime(run, (when, when))
    return run


def test_runs_beyond_the_users_count_are_pruned_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run keeps the newest `GRAPHMEND_KEEP_RUNS` finished runs (itself counted) and deletes
    older ones and unfinished ones a day old; a run going on, a folder graphmend did not name, and
    a link (with what it points to) are left alone. 0 keeps every run."""
    from graphmend.record.runs import RUNS, new_run

    runs = tmp_path / RUNS
    finished = [_stamped(runs, f"20261201-0000{i:02d}-1", "run.json") for i in range(6)]
    going_on = _stamped(runs, "20261130-000000-7", None)
    cut_short = _stamped(runs, "20261129-000000-8", None, age_days=2)
    mine = _stamped(runs, "my-notes", None, age_days=30)
    target = _stamped(tmp_path / "elsewhere", "20261101-000000-9", "run.json")
    (runs / "20261101-000000-9").symlink_to(target)
    monkeypatch.setenv("GRAPHMEND_KEEP_RUNS", "3")
    new = new_run(tmp_path)
    left = {p.name for p in runs.iterdir()}
    assert left == {new.name, finished[5].name, finished[4].name, going_on.name, mine.name, "20261101-000000-9"}
    assert not cut_short.exists() and target.is_dir()
    monkeypatch.setenv("GRAPHMEND_KEEP_RUNS", "0")
    (new / "run.json").write_text("{}", encoding="utf-8")
    assert new_run(tmp_path).name not in left and len(list(runs.iterdir())) == len(left) + 1
