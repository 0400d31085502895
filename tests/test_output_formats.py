"""`graphmend check` for CI and review: SARIF, GitHub and GitLab formats, json-lines, statistics,
stdin, colour, progress, per-file ignores and excludes (issue 15, items 3 and 4)."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, run

from graphmend import api, cli
from graphmend.rules import RULES

SARIF_SCHEMA = (
    ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
)  # OASIS sarif-spec, errata01 (see tests/data/README.md)
BROKEN = """# Two graph breaks:
# the tensor `if` on line 10, and the print on line 14.
# (the `if`'s fix is safe; the print's is unsafe, as every message fix is: issue 50)
import torch



@torch.compile
def f(x, y, **options):
    if x.sum() > 0:
        z = x + 1
    else:
        z = x * 2
    print("done")
    return z
"""


@pytest.fixture()
def broken(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    return tmp_path / "model.py"


def test_sarif_is_valid_2_1_0_with_rule_metadata_and_fixes(broken: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "sarif", "model.py")
    assert code == 1
    document = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.validate(document, schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    (run_,) = document["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules[: len(RULES)]] == [r.code for r in RULES]
    by_id = {r["id"]: r for r in rules}
    assert by_id["GM101"]["helpUri"] == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"
    # Each rule is tagged with its family; GM4xx are not graph breaks (they were tagged "graph-break").
    assert {by_id[code]["properties"]["tags"][0] for code in ("GM101", "GM201", "GM301", "GM401", "GM405")} == {
        "control-flow",
        "side-effect",
        "not-fixable-by-rewrite",
        "cuda-graphs-or-recompilation",
    }
    assert by_id["GM405"]["properties"]["tags"] == ["cuda-graphs-or-recompilation"]
    assert "Why it breaks the graph" in by_id["GM101"]["help"]["text"]
    results = {r["ruleId"]: r for r in run_["results"]}
    assert set(results) == {"GM101", "GM201"}
    branch = results["GM101"]
    assert rules[branch["ruleIndex"]]["id"] == "GM101"
    location = branch["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 10
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == broken.parent.resolve().as_uri() + "/"
    # The SARIF fix is the rewrite `graphmend fix` makes: applied to the file, it gives the same text.
    (fix,) = branch["fixes"]
    (change,) = fix["artifactChanges"]
    rewritten = _apply_sarif_replacements(BROKEN, change["replacements"])
    diagnostic = next(d for d in api.check_source(BROKEN, broken) if d.code == "GM101")
    assert diagnostic.fix is not None
    expected, _ = api.apply_fixes(BROKEN, [diagnostic.fix])
    assert rewritten == expected and "torch.where" in rewritten


def _apply_sarif_replacements(text: str, replacements: list[dict]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:  # 1-based, unicode code points (the run's columnKind)
        return starts[line - 1] + column - 1

    for replacement in sorted(
        replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True
    ):
        region = replacement["deletedRegion"]
        begin, end = offset(region["startLine"], region["startColumn"]), offset(region["endLine"], region["endColumn"])
        text = text[:begin] + replacement["insertedContent"]["text"] + text[end:]
    return text


def test_sarif_with_no_findings_is_valid(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("x = 1\n")
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "sarif", "ok.py")
    assert code == 0
    document = json.loads(out)
    jsonschema.validate(document, json.loads(SARIF_SCHEMA.read_text()))
    assert document["runs"][0]["results"] == []


def test_github_annotations_follow_the_workflow_command_syntax(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    odd = tmp_path / "a,b:c.py"  # properties escape `,` and `:`
    odd.write_text(BROKEN)
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "github", odd.name)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    pattern = re.compile(
        r"^::(error|warning|notice) file=a%2Cb%3Ac\.py,line=(\d+),endLine=\d+,col=\d+,endColumn=\d+,"
        r"title=graphmend \((GM\d{3})\)::(GM\d{3}) [^\n]+$"
    )
    matches = [pattern.match(line) for line in lines]
    assert all(matches), lines
    assert [(m.group(1), m.group(2), m.group(3)) for m in matches] == [
        ("warning", "10", "GM101"),
        ("warning", "14", "GM201"),
    ]


def test_gitlab_code_quality_fields_and_stable_fingerprints(broken: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "gitlab", "model.py")
    assert code == 1
    issues = json.loads(out)
    assert len(issues) == 2
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert issue["location"]["path"] == "model.py" and isinstance(issue["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == 2
    broken.write_text("# a comment moves every line\n" + BROKEN)
    moved = json.loads(run(capsys, "check", "--no-cache", "--output-format", "gitlab", "model.py")[1])
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    assert [i["location"]["lines"]["begin"] for i in moved] == [11, 15]


def test_json_lines_is_one_json_object_per_finding(broken: Path, capsys) -> None:
    whole = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", "model.py")[1])
    lines = run(capsys, "check", "--no-cache", "--output-format", "json-lines", "model.py")[1].splitlines()
    assert [json.loads(line) for line in lines] == whole


def test_concise_and_quiet_leave_out_the_source(broken: Path, capsys) -> None:
    full = run(capsys, "check", "--no-cache", "model.py")[1]
    assert "10 |     if x.sum() > 0:" in full and "Found 2 graph breaks in 1 file." in full
    concise = run(capsys, "check", "--no-cache", "--output-format", "concise", "model.py")[1]
    assert concise.splitlines()[0].startswith("model.py:10:8: GM101 [*] This `if` tests") and " | " not in concise
    assert concise.splitlines()[1].startswith("model.py:14:5: GM201 `print`")  # [*]: a safe fix applies
    quiet = run(capsys, "check", "--no-cache", "-q", "model.py")[1]
    assert quiet.splitlines() == concise.splitlines()[:2]


def test_full_is_ruffs_name_for_the_text_format(broken: Path, capsys) -> None:
    assert (
        run(capsys, "check", "--no-cache", "--output-format", "full", "model.py")[:2]
        == run(capsys, "check", "--no-cache", "model.py")[:2]
    )


def test_statistics_and_exit_zero(broken: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--statistics", "--exit-zero", "model.py")
    assert code == 0
    # [*]: a safe fix applies, [-]: an unsafe one (the print's: exported, it prints on every call)
    assert out.splitlines()[:2] == ["1\tGM101\t[*] data-dependent-if", "1\tGM201\t[-] print-in-compiled-code"]
    # The last line says what the markers mean, those the rows use (Ruff's habit).
    assert out.splitlines()[-1] == "[*] fixable with `--fix`; [-] only with `--fix --unsafe-fixes`."
    rows = json.loads(run(capsys, "check", "--no-cache", "--statistics", "--output-format", "json", "model.py")[1])
    assert [(r["code"], r["count"], r["fixable"]) for r in rows] == [("GM101", 1, 1), ("GM201", 1, 1)]


def test_stdin_check_uses_the_stdin_filename_settings(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM2"]\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    code, out, _ = run(capsys, "check", "-", "--stdin-filename", "pkg/model.py", "--output-format", "concise")
    assert code == 1
    assert out.splitlines()[1:] == [
        "Found 1 graph break in 1 file.",
        "[*] 1 fixable with `--fix`.",
    ]
    assert out.startswith("pkg/model.py:10:8: GM101")


def test_stdin_fix_writes_the_fixed_code_to_stdout(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    code, out, err = run(capsys, "fix", "-", "--unsafe-fixes")
    assert code == 0
    assert out == api.fix_source(BROKEN, unsafe=True).fixed and "torch.where" in out
    assert "Fixed 2 graph breaks; 0 remaining." in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "-", "model.py"], "cannot be combined"),
        (["check", "--stdin-filename", "x.py", "model.py"], "needs `-`"),
    ],
)
def test_stdin_misuse_is_a_clear_error(broken: Path, capsys, args: list[str], message: str) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2 and message in err


def test_colour_only_when_asked_or_on_a_terminal(broken: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert "\x1b[" not in run(capsys, "check", "--no-cache", "model.py")[1]  # captured: not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[1;31mGM101\x1b[0m" in run(capsys, "check", "--no-cache", "model.py")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(capsys, "check", "--no-cache", "model.py")[1]


def test_per_file_ignores_and_extend_exclude(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.graphmend]\nextend-exclude = ["scratch", "gen/*_pb.py"]\n'
        '[tool.graphmend.per-file-ignores]\n"tests/*" = ["GM2"]\n"__init__.py" = ["GM"]\n'
    )
    for name in ("model.py", "tests/test_model.py", "scratch/try.py", "gen/a_pb.py", "gen/b.py", "pkg/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BROKEN)
    found = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", ".")[1])
    codes: dict[str, set[str]] = {}
    for item in found:
        codes.setdefault(Path(item["path"]).as_posix(), set()).add(item["code"])
    assert codes == {"model.py": {"GM101", "GM201"}, "tests/test_model.py": {"GM101"}, "gen/b.py": {"GM101", "GM201"}}
    # A file named on the command line is checked even when excluded (as Ruff does without --force-exclude).
    named = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", "scratch/try.py")[1])
    assert {item["code"] for item in named} == {"GM101", "GM201"}


@pytest.mark.parametrize(
    "content, message",
    [
        ('[tool.graphmend]\nper-file-ignores = ["GM1"]\n', "must be a table of globs to codes"),
        ('[tool.graphmend.per-file-ignores]\n"a.py" = ["E501"]\n', "not graphmend's"),
        ("[tool.graphmend]\nextend-exclude = [1]\n", "must be a list of globs"),
    ],
)
def test_bad_ignore_and_exclude_settings_are_clear_errors(
    tmp_path: Path, capsys, monkeypatch, content: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "a.py").write_text(BROKEN)
    code, _, err = run(capsys, "check", "--no-cache", "a.py")
    assert code == 2 and message in err


def test_progress_bar_only_for_long_interactive_text_runs(monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    args = argparse.Namespace(output_format="text", quiet=False)
    with cli._progress_bar(args, 500) as progress:
        assert progress is not None
        progress(10, 500)
    with cli._progress_bar(args, 20) as progress:
        assert progress is None  # too short to wait for
    with cli._progress_bar(argparse.Namespace(output_format="json", quiet=False), 500) as progress:
        assert progress is None  # never with machine output
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with cli._progress_bar(args, 500) as progress:
        assert progress is None  # never in a pipe
