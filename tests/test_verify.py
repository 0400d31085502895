"""`graphmend verify`: runs a file and its rewrite under real Dynamo and reports the comparison."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")

from conftest import ROOT, run  # noqa: E402

from graphmend.cli import main  # noqa: E402

FIGURE1 = str(ROOT / "tests" / "data" / "figure1_safe.py")
FIGURE5 = str(ROOT / "examples" / "figure5.py")


def table(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines()[2:]:
        label, _, rest = line.partition("  ")
        rows[label.strip()] = rest.split()
    return rows


def test_figure1_both_branches(capsys) -> None:
    code, out, _ = run(
        capsys,
        "verify",
        FIGURE1,
        "--entry",
        "f",
        "--inputs",
        "torch.full((4,), 5.0), torch.ones(4)",
        "--inputs",
        "torch.ones(4), torch.ones(4)",
    )
    assert code == 0, out
    rows = table(out)
    assert rows["graphs"] == ["3", "1"]  # before: the graph up to the `if`, and one resume graph per branch
    assert rows["graph-break sites"] == ["figure1_safe.py:10", "—"]
    assert rows["fullgraph=True"] == ["fail", "pass"]
    assert rows["outputs equal"] == ["yes"] and rows["stdout/logs/warnings equal"] == ["yes"]


def test_figure5_print_is_kept(capsys) -> None:
    code, out, _ = run(  # unsafe only for TorchScript
        capsys, "verify", FIGURE5, "--entry", "fn", "--inputs", "torch.tensor([1.0, -2.0])", "--unsafe-fixes"
    )
    assert code == 0 and table(out)["fullgraph=True"] == ["fail", "pass"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "nope", "--inputs", "torch.ones(4), torch.ones(4)"], "'nope' is not defined"),
        (["--entry", "f", "--inputs", "torch.ones(4,"], "cannot evaluate --inputs"),
    ],
)
def test_bad_requests_exit_two(capsys, args: list[str], message: str) -> None:
    code, _, err = run(capsys, "verify", FIGURE1, *args)
    assert code == 2 and message in err


def test_without_torch_it_says_how_to_install(tmp_path) -> None:
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ImportError('hidden')\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "graphmend", "verify", FIGURE1, "--entry", "f", "--inputs", "1"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    assert result.returncode == 2 and "pip install 'graphmend[verify]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_says_it_executes_code(capsys) -> None:
    assert main(["verify", "--help"]) == 0
    assert "EXECUTES" in capsys.readouterr().out
