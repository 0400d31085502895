"""Issue 52: `graphmend fix --prove -- COMMAND` proves each fix on the command's own runs, with real
Dynamo and no mocks. Each program in `prove_programs/` is a small project of our own, written as
users write training and serving loops; the verdicts below are what really happens there (each
was checked by hand against the two runs' outputs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "prove_programs"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone"]


def prove(
    tmp_path: Path,
    program: str,
    command: list[str] | None = None,
    stdin: str = "",
    *options: str,
    exit_code: int = 0,
    dashes: bool = True,
):
    """Run `fix --prove --unsafe-fixes` on a copy of the program; its output and proof record."""
    project = tmp_path / program
    shutil.copytree(PROGRAMS / program, project)
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", "--prove", "--unsafe-fixes", *options, *(["--"] if dashes else [])]
        + (command or [sys.executable, "train.py"]),
        cwd=project,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == exit_code, done.stderr
    (record,) = (project / ".graphmend" / "proofs").glob("*/proof.json")
    return done, json.loads(record.read_text(encoding="utf-8")), project


def only_fix(record: dict) -> dict:
    (fix,) = record["fixes"]
    return fix


def test_a_deferred_print_in_an_inlined_forward_differs(tmp_path: Path) -> None:
    """Dynamo drops a deferred call made in a function it inlines: the fixed run prints nothing."""
    done, record, project = prove(tmp_path, "inlined_print")
    fix = only_fix(record)
    assert (fix["code"], fix["verdict"], fix["applied"]) == ("GM201", "differs", False)
    assert (
        "stdout differs" in fix["differences"][0]
        and "'block output torch.Size([4, 8])' before" in fix["differences"][0]
    )
    assert "print(" in (project / "model.py").read_text(encoding="utf-8")  # not applied
    assert "model.py:11 GM201 in Block.forward: differs (unsafe)" in done.stdout


def test_the_command_may_follow_without_dashes_as_record_takes_it(tmp_path: Path) -> None:
    """Issue 69: `fix --prove python train.py`: the first word that is not a path starts the command."""
    _, record, _ = prove(tmp_path, "no_grad_if", [sys.executable, "train.py"], dashes=False)
    assert record["command"] == [sys.executable, "train.py"] and only_fix(record)["verdict"] == "proved"


def test_a_predicated_if_under_no_grad_is_proved_and_applied(tmp_path: Path) -> None:
    done, record, project = prove(tmp_path, "no_grad_if")
    fix = only_fix(record)
    assert (fix["verdict"], fix["applied"], fix["breaks_before"], fix["breaks_removed"]) == ("proved", True, 1, 1)
    assert "torch.where" in (project / "model.py").read_text(encoding="utf-8")
    assert record["graphs"]["before"] > record["graphs"]["after"] == 1
    assert record["steps"] == 0 and record["calls"] == 4
    # the command seeds torch itself: said, with its line
    assert any("seeds torch itself" in s and "train.py:7" in s for s in record["seeds"]), record["seeds"]


def test_a_layerdrop_gate_in_training_with_adamw_differs_at_the_step(tmp_path: Path) -> None:
    """Run always and selected, a dropped layer gets a zero gradient instead of none."""
    _, record, _ = prove(tmp_path, "layerdrop")
    fix = only_fix(record)
    assert fix["verdict"] == "differs"
    assert "gradient differs" in fix["differences"][0] and "before optimizer step 1" in fix["differences"][0]
    assert "None before, a float32 tensor of shape" in fix["differences"][0]
    assert record["steps"] == 3


def test_a_fix_that_adds_a_recompile_is_proved_and_says_so(tmp_path: Path) -> None:
    """Both branches run in the fixed code: the untaken one's Python int is guarded on (one recompile,
    then automatic dynamic). Outputs are the same: proved, with the recompile beside it."""
    done, record, _ = prove(tmp_path, "adds_recompiles")
    assert only_fix(record)["verdict"] == "proved"
    assert record["recompiles"]["after"] == record["recompiles"]["before"] + 1
    assert "1 recompile more" in done.stdout


def test_a_fix_the_run_never_reaches_is_not_exercised(tmp_path: Path) -> None:
    done, record, project = prove(tmp_path, "never_called")
    fix = only_fix(record)
    assert (fix["verdict"], fix["applied"]) == ("not exercised", False)
    assert len(record["runs"]) == 1  # nothing to run the fixes for
    assert "if x.sum() > 1:" in (project / "model.py").read_text(encoding="utf-8")


def test_two_ranks_under_torchrun_on_gloo(tmp_path: Path) -> None:
    _, record, _ = prove(tmp_path, "torchrun_gloo", [*TORCHRUN, "train.py"])
    assert record["processes"] == 3  # the launcher and two ranks
    assert record["steps"] == 6  # three steps on each rank
    assert only_fix(record)["verdict"] == "proved"


def test_the_fixed_run_crashing_differs(tmp_path: Path) -> None:
    """Run unconditionally, cross_entropy meets the labels the original never gave it and raises."""
    _, record, project = prove(tmp_path, "fixed_crashes")
    differences = "\n".join(only_fix(record)["differences"])
    assert "exception differs" in differences and "IndexError: Target -5 is out of bounds" in differences
    assert "exit code differs in the command: 0 before, 1 after" in differences
    assert "F.cross_entropy" in (project / "model.py").read_text(encoding="utf-8")


def test_a_command_reading_stdin_gets_the_same_input_in_every_run(tmp_path: Path) -> None:
    done, record, _ = prove(tmp_path, "reads_stdin", None, "1\n10\n-5\n")
    assert record["stdin"] == "piped (8 bytes, given to every run)"
    assert record["calls"] == 3 and only_fix(record)["verdict"] == "proved"
    proof = next((Path(record["cwd"]) / ".graphmend" / "proofs").glob("*/"))
    outputs = {(proof / run["folder"] / "stdout.txt").read_text() for run in record["runs"]}
    assert outputs == {"[0.0, 0.0, 0.0]\n[1.0, 1.0, 1.0]\n[0.0, 0.0, 0.0]\n"}  # each line read in each run


def test_a_command_that_seeds_nothing_is_seeded_and_told(tmp_path: Path) -> None:
    """`adds_recompiles` draws its inputs with `torch.randn` and seeds nothing: unseeded, the two
    runs could not be compared at all."""
    done, record, _ = prove(tmp_path, "adds_recompiles")
    assert record["seeds"] == ["graphmend seeded torch, random, numpy with 0 in each process (the command does not)"]
    assert "Seeds: graphmend seeded torch, random, numpy" in done.stdout


@pytest.mark.parametrize("arguments", [["fix", "--prove"], ["fix", "--", "python", "x.py"]])
def test_prove_and_a_command_come_together(tmp_path: Path, arguments: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "graphmend", *arguments], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "--prove needs a command after `--`" in done.stderr


def _record_verdict(project: Path, verdict: str, signed: bool = True) -> None:
    """A proof record, as `fix --prove` writes one (signed with this user's key, beside its run's
    folder), giving the project's only fix `verdict`; `signed=False`: as a repository could ship it."""
    from graphmend.prove.candidates import find_candidates
    from graphmend.signing import signed as signed_record

    (candidate,) = find_candidates([project], unsafe=True)
    folder = project / ".graphmend" / "proofs" / "20261128-120000-1"
    (folder / "original").mkdir(parents=True)
    fix = {"path": "model.py", "line": candidate.line, "fix_hash": candidate.fix_hash, "verdict": verdict}
    record: dict = {"command": ["python", "train.py"], "ended": 1.0e9, "processes": 1, "steps": 40, "calls": 40}
    record["fixes"] = [{**fix, "differences": []}]
    record["runs"] = [{"folder": "original", "fixes": [], "exit_code": 0, "seconds": 1.0}]
    (folder / "proof.json").write_text(json.dumps(signed_record(record) if signed else record), encoding="utf-8")


def test_check_says_a_fixs_verdict_until_its_function_changes(tmp_path: Path) -> None:
    """`check` and the editor read the proof records: the finding says its fix's verdict; an edit
    elsewhere in the file keeps it, an edit of the function makes it stale (no verdict)."""
    from graphmend.pipelines import check_source
    from graphmend.reporting import proof_sentence

    project = tmp_path / "p"
    shutil.copytree(PROGRAMS / "no_grad_if", project)
    _record_verdict(project, "proved")
    model = project / "model.py"
    text = model.read_text(encoding="utf-8")
    (finding,) = check_source(text, model)
    assert finding.data.proof is not None and finding.data.proof.verdict == "proved"
    assert proof_sentence(finding.data.proof).startswith(
        "proved on your run of `python train.py` (1 process, 40 steps, "
    )
    moved = "# a comment\n\n" + text + "\n\ndef unrelated():\n    return 1\n"
    (still,) = check_source(moved, model)
    assert still.data.proof == finding.data.proof
    edited = text.replace("y = y * 2", "y = y * 3")
    (stale,) = check_source(edited, model)
    assert stale.data.proof is None


def test_apply_proved_fixes_lets_fix_apply_an_unsafe_fix_the_run_proved(tmp_path: Path) -> None:
    """Only the user's own flag and the user's own (signed) proof: the project's `pyproject.toml`
    cannot turn it on (issue 68), and `fix` says it did not take it."""
    project = tmp_path / "p"
    shutil.copytree(PROGRAMS / "no_grad_if", project)
    _record_verdict(project, "differs")
    (project / "pyproject.toml").write_text("[tool.graphmend]\napply-proved-fixes = true\n", encoding="utf-8")
    fix = [sys.executable, "-m", "graphmend", "fix", "--no-cache", "--apply-proved-fixes", "."]
    assert "Fixed 0 graph breaks" in subprocess.run(fix, cwd=project, capture_output=True, text=True).stdout
    shutil.rmtree(project / ".graphmend")
    _record_verdict(project, "proved")
    from_the_project = subprocess.run(fix[:-2] + ["."], cwd=project, capture_output=True, text=True)
    assert "Fixed 0 graph breaks" in from_the_project.stdout
    assert "`apply-proved-fixes` is not taken from a project's settings" in from_the_project.stderr
    assert "Fixed 1 graph break" in subprocess.run(fix, cwd=project, capture_output=True, text=True).stdout
    assert "torch.where" in (project / "model.py").read_text(encoding="utf-8")


def test_text_is_compared_in_the_originals_line_numbers_and_without_volatile_parts() -> None:
    """What a run prints names lines of a rewritten file in the rewrite's numbers and quotes its
    text; a warning moved by a helper added above is the same warning. Clocks, durations, addresses
    and UUIDs differ between any two runs of any program."""
    from graphmend.prove.candidates import line_map
    from graphmend.prove.compare import masked, unquoted, unshifted

    original = "import warnings\n\n\ndef f():\n    warnings.warn('old')\n"
    fixed = (
        "import warnings\n\n\ndef _helper(m):\n    warnings.warn(m, stacklevel=2)\n\n\ndef f():\n    _helper('old')\n"
    )
    maps = {"/p/model.py": line_map(original, fixed)}
    before = "/p/model.py:5: UserWarning: old\n  warnings.warn('old')\n"
    after = "/p/model.py:9: UserWarning: old\n  _helper('old')\n"
    assert unquoted(unshifted(after, maps), maps) == unquoted(before, maps) == "/p/model.py:5: UserWarning: old\n  …\n"
    assert unquoted(unshifted("/p/model.py:5: UserWarning: old\n  x\n", maps), maps) != unquoted(before, maps)
    assert (
        masked("W1128 12:04:52.950000 5248 run.py:874] step took 3.2s at 0x7f3a2b1c4d50")
        == "…run.py:874] step took … at …"
    )
    assert masked("loss 0.1234 lr=0.001") == "loss 0.1234 lr=0.001"  # values are not volatile


def test_a_helper_process_that_observed_nothing_is_not_matched(tmp_path: Path) -> None:
    """Inductor starts compile workers (Python processes, so observed too) as many as torch
    decides: one that printed, logged, warned, called and stepped nothing is no process of the
    user's, and a run with one more of them does not differ."""
    from graphmend.prove.compare import differences, read_processes

    def process(folder: Path, pid: int, argv: list[str], text: str) -> None:
        folder.mkdir(exist_ok=True)
        lines = [{"process": {"argv": argv, "rank": None}}, {"text": "stdout", "data": text}, {"end": True}]
        (folder / f"observed-{pid}.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n", encoding="utf-8")

    process(tmp_path / "a", 10, ["train.py"], "loss 1.0\n")
    process(tmp_path / "a", 11, ["-c"], "")
    process(tmp_path / "b", 20, ["train.py"], "loss 1.0\n")
    for pid in (21, 22):
        process(tmp_path / "b", pid, ["-c"], "")
    assert differences(read_processes(tmp_path / "a"), read_processes(tmp_path / "b"), {}) == []
    process(tmp_path / "b", 580, ["train.py"], "loss 0.570 at step 580\n")
    process(tmp_path / "a", 570, ["train.py"], "loss 0.580 at step 570\n")  # pids masked, decimals not
    (tmp_path / "a" / "observed-10.jsonl").unlink()
    (tmp_path / "b" / "observed-20.jsonl").unlink()
    (found,) = differences(read_processes(tmp_path / "a"), read_processes(tmp_path / "b"), {})
    assert "'loss 0.580 at step …' before, 'loss 0.570 at step …' after" in found.detail
    process(tmp_path / "b", 20, ["train.py"], "loss 2.0\n")
    process(tmp_path / "a", 10, ["train.py"], "loss 1.0\n")
    (tmp_path / "a" / "observed-570.jsonl").unlink()
    (tmp_path / "b" / "observed-580.jsonl").unlink()
    (found,) = differences(read_processes(tmp_path / "a"), read_processes(tmp_path / "b"), {})
    assert found.kind == "stdout" and "'loss 1.0' before, 'loss 2.0' after" in found.detail


def test_a_fix_in_the_main_script_is_served_in_its_place(tmp_path: Path) -> None:
    """Python runs the main script itself, not through an import: the fixed run still runs the
    rewritten script, as `__main__`, with its own `__file__`, arguments and exit code."""
    _, record, project = prove(tmp_path, "main_script", [sys.executable, "train.py", "--steps", "4"])
    fix = only_fix(record)
    assert (fix["path"], fix["verdict"], fix["breaks_removed"]) == ("train.py", "proved", 1)
    assert [run["exit_code"] for run in record["runs"]] == [0, 0]
    proof = next((project / ".graphmend" / "proofs").glob("*/"))
    outputs = {(proof / run["folder"] / "stdout.txt").read_text().splitlines()[0] for run in record["runs"]}
    assert outputs == {"running train.py ['--steps', '4'] __main__"}
    assert "torch.where" in (project / "train.py").read_text(encoding="utf-8")


def test_workdir_keeps_each_runs_files_apart(tmp_path: Path) -> None:
    """The command runs at least twice: with `--workdir DIR`, each run starts in a fresh folder of
    its own under DIR, so what it writes to relative paths is kept apart and the project gets none."""
    project = tmp_path / "no_grad_if"
    shutil.copytree(PROGRAMS / "no_grad_if", project)
    with (project / "train.py").open("a", encoding="utf-8") as script:
        script.write('\nopen("scores.txt", "w").write("written")\n')
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", "--prove", "--unsafe-fixes", "--workdir", str(tmp_path / "work")]
        + ["--", sys.executable, str(project / "train.py")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    folders = sorted(p.parent.name for p in (tmp_path / "work").glob("*/scores.txt"))
    assert [name.rsplit("-", 1)[-1] for name in folders] == ["1", "original"]  # `<proof>-fixes-1`, `<proof>-original`
    assert len({name.split("-original")[0].split("-fixes")[0] for name in folders}) == 1  # one proof's fresh folders
    assert not (project / "scores.txt").exists() and "--workdir" not in done.stderr  # (offered only without it)


def test_a_lookup_of_torch_does_not_use_up_the_observers_start(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """transformers asks `importlib.util.find_spec("torch")` before importing it: the observer's
    start must wait for the import itself, else nothing of torch would be observed in either run."""
    import importlib
    import importlib.util

    from graphmend.record.probe import _AfterImport

    (tmp_path / "late_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    started: list[object] = []
    finder = _AfterImport({"late_module": started.append}, lambda name, error: started.append(error))
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    assert importlib.util.find_spec("late_module") is not None and started == []
    module = importlib.import_module("late_module")
    assert started == [module]
    sys.modules.pop("late_module")


def test_fixes_that_overlap_wait_for_the_next_proof() -> None:
    """An `elif` chain's fixes overlap: applied together, `apply_fixes` keeps the first only, so the
    second would be reported proved without ever running. It is left for the next proof."""
    from graphmend.prove.candidates import find_candidates

    chain = Path(__file__).parent / "fixtures" / "GM101" / "fix_elif_chain.in.py"
    candidates = find_candidates([chain], unsafe=True)
    assert len(candidates) == 1


def test_a_command_that_fails_as_it_is_proves_nothing(tmp_path: Path) -> None:
    """Issue 69: a run that fails is a failed proof: said first, with the exit code and the end of
    stderr; nothing applied; graphmend exits non-zero."""
    done, record, project = prove(tmp_path, "fails_as_it_is", exit_code=2)
    first = done.stdout.splitlines()[0]
    assert first.startswith("graphmend: the proof failed: the command fails as it is (exit code 1)"), done.stdout
    assert "FileNotFoundError" in done.stdout and "missing-checkpoint.pt" in done.stdout
    assert record["fixes"] == [] and record["failure"] and len(record["runs"]) == 1
    assert "if y.mean() > 0:" in (project / "model.py").read_text(encoding="utf-8")


def test_a_command_whose_own_runs_differ_blames_no_fix(tmp_path: Path) -> None:
    """Issue 69: the fixed run prints another run id than the original, and so does the original
    run again: the difference is the command's, so no fix differs or is proved, and the report
    suggests --mask and --workdir by name; with --mask, the fix is proved."""
    done, record, project = prove(tmp_path / "a", "noisy_output", exit_code=2)
    assert done.stdout.startswith("graphmend: the proof failed: two runs of the command as it is differ"), done.stdout
    assert "stdout differs" in done.stdout and "--mask REGEX" in done.stdout and "--workdir DIR" in done.stdout
    assert record["fixes"] == [] and len(record["runs"]) == 3  # the original, the fixes, the original again
    assert "if y.mean() > 0:" in (project / "model.py").read_text(encoding="utf-8")
    _, masked_record, _ = prove(tmp_path / "b", "noisy_output", None, "", "--mask", r"run [0-9a-f]{12}")
    assert only_fix(masked_record)["verdict"] == "proved"
