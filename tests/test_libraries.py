"""Breaks inside installed libraries are reported at the user's call, and agree with real Dynamo.

A package is written into a temporary site folder (never installed, never imported by graphmend),
the user's project calls it from compiled code, and `library-paths` points graphmend there. Dynamo's
own break reports (`torch._dynamo.explain`, on inputs that take every branch) give, for each break,
the innermost frame (the library line) and the user's frame (the call).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphmend import api

LIBRARY = {
    "fakelib/__init__.py": "from .metrics import accuracy\nfrom .losses import Contrastive\n",
    "fakelib/metrics.py": (
        "def _check(preds):\n"
        "    if preds.sum() > 0:\n"  # line 2
        '        print("positive predictions")\n'  # line 3
        "    return preds\n"
        "\n"
        "\n"
        "def accuracy(preds, target):\n"
        "    preds = _check(preds)\n"
        "    return (preds == target).float().mean()\n"
    ),
    "fakelib/losses.py": (
        "from torch import nn\n"
        "\n"
        "\n"
        "class Contrastive(nn.Module):\n"
        "    def forward(self, a, b):\n"
        "        d = (a - b).pow(2).sum(-1)\n"
        "        return d[d > 0.5].mean()\n"  # line 7
    ),
    "fakelib/unused.py": (
        "from torch import nn\n\n\nclass Loud(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"
    ),
}
USER = (
    "import torch\n"
    "from torch import nn\n"
    "\n"
    "from fakelib import Contrastive, accuracy\n"
    "\n"
    "\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.loss = Contrastive()\n"
    "\n"
    "    def forward(self, x, y):\n"
    "        score = accuracy(x, y)\n"  # line 13
    "        return self.loss(x, y) + score\n"  # line 14
    "\n"
    "\n"
    "model = torch.compile(Model())\n"
)


def write_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """The user's project in `tmp_path/project` following the library in its own `.venv` (a project's
    `library-paths` reach only the project and the interpreter's folders): (site, train.py)."""
    project = tmp_path / "project"
    site = project / ".venv" / "site-packages"
    for name, text in LIBRARY.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    (project / "train.py").write_text(USER)
    (project / "pyproject.toml").write_text(
        '[tool.graphmend]\nfollow-libraries = true\nlibrary-paths = [".venv/site-packages"]\n'
    )
    return site, project / "train.py"


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    return write_workspace(tmp_path)


def _library_findings(path: Path, overrides: dict | None = None) -> set[tuple[int, str, str, int]]:
    """(call line, code, library file, library line), 1-based, of the findings reported at calls."""
    [result] = api.check_paths([path], overrides=overrides, jobs=1)
    return {
        (d.range.start.line + 1, d.code, Path(d.data.library.path).name, d.data.library.line + 1)
        for d in result.diagnostics
        if d.data.library is not None
    }


def test_a_break_in_a_library_is_reported_at_the_users_call(workspace: tuple[Path, Path]) -> None:
    _, user = workspace
    assert _library_findings(user) == {
        (13, "GM101", "metrics.py", 2),
        (13, "GM201", "metrics.py", 3),
        (14, "GM302", "losses.py", 7),
    }
    assert "fakelib" not in sys.modules  # found on disk, never imported


def test_the_finding_names_the_library_line_and_the_chain(workspace: tuple[Path, Path]) -> None:
    site, user = workspace
    [result] = api.check_paths([user], jobs=1)
    [printed] = [d for d in result.diagnostics if d.code == "GM201"]
    assert printed.message.startswith("`fakelib.metrics.accuracy` breaks the graph in fakelib/metrics.py:3: ")
    assert "no automatic fix" not in printed.message and printed.fix is None
    library = str((site / "fakelib" / "metrics.py").resolve())
    assert printed.related[0].path == library and printed.related[0].range.start.line == 2
    assert any("via `accuracy`" in r.message for r in printed.related[1:])  # its chain inside the library


def test_the_library_findings_agree_with_dynamo(workspace: tuple[Path, Path]) -> None:
    torch = pytest.importorskip("torch")
    site, user = workspace
    sys.path.insert(0, str(site))
    try:
        namespace: dict[str, object] = {}
        exec(compile(USER.replace("model = torch.compile(Model())\n", ""), str(user), "exec"), namespace)
        torch._dynamo.reset()
        model = namespace["Model"]()
        x = torch.ones(3, 4)  # sum > 0: the print runs; some distances over 0.5
        y = torch.zeros(3, 4)
        explained = torch._dynamo.explain(model)(x, y)
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m == "fakelib" or m.startswith("fakelib.")]:
            del sys.modules[name]
    dynamo = {(Path(r.user_stack[-1].filename).name, r.user_stack[-1].lineno) for r in explained.break_reasons}
    ours = {(file, library_line) for _, _, file, library_line in _library_findings(user)}
    assert dynamo == {("metrics.py", 2), ("losses.py", 7)}
    # The print runs in the frame Dynamo resumes after the `if`, which it reports no break for here;
    # graphmend names its line all the same (a print breaks the graph: tests/dynamo_corpus).
    assert ours == dynamo | {("metrics.py", 3)}


def test_libraries_are_not_followed_when_the_setting_is_off(workspace: tuple[Path, Path]) -> None:
    _, user = workspace
    assert _library_findings(user, {"follow_libraries": False}) == set()
    (user.parent / "pyproject.toml").write_text("[tool.graphmend]\n")  # the default: off
    assert _library_findings(user, {"library_paths": (str(workspace[0]),)}) == set()


def test_a_library_that_is_not_installed_costs_nothing(workspace: tuple[Path, Path]) -> None:
    site, user = workspace
    (user.parent / "pyproject.toml").write_text(
        '[tool.graphmend]\nfollow-libraries = true\nlibrary-paths = ["/nonexistent/site"]\n'
    )
    [result] = api.check_paths([user], jobs=1)
    assert result.error is None and not [d for d in result.diagnostics if d.data.library is not None]


def test_the_cli_reports_library_findings_in_json(workspace: tuple[Path, Path]) -> None:
    site, user = workspace
    (user.parent / "pyproject.toml").write_text("[tool.graphmend]\n")  # off: the flag turns it on
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", str(user), "--output-format", "json", "--library-path", str(site)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    library = [r for r in json.loads(done.stdout) if "library" in r]
    assert {(r["code"], r["line"], Path(r["library"]["path"]).name, r["library"]["line"]) for r in library} == {
        ("GM101", 13, "metrics.py", 2),
        ("GM201", 13, "metrics.py", 3),
        ("GM302", 14, "losses.py", 7),
    }
    assert all(r["fix"] is None and r["related"][0]["kind"] == "library" for r in library)


def test_fix_sees_the_findings_check_sees(workspace: tuple[Path, Path]) -> None:
    """Issue 40: `fix` built its project without the libraries, so with `follow-libraries` on it
    reported other findings than `check` (and the editor). Now one build serves both: what `fix`
    leaves is what `check` reports, library calls included."""
    _, user = workspace
    [checked] = api.check_paths([user], jobs=1)
    [fixed] = api.fix_paths([user], write=False, jobs=1)
    assert fixed.error is None and fixed.fixed == fixed.original  # calls into a library have no fix
    assert [(d.code, d.range, d.message) for d in fixed.remaining] == [
        (d.code, d.range, d.message) for d in checked.diagnostics
    ]
    assert len([d for d in fixed.remaining if d.data.library is not None]) == 3


def test_a_base_class_method_runs_the_override_of_the_instance_called(tmp_path: Path) -> None:
    """A library's base `forward` calling `self.compute(...)` runs the subclass's `compute` (the class
    the user made an instance of), in another module of the library."""
    torch = pytest.importorskip("torch")
    site = tmp_path / "site"
    (site / "losslib").mkdir(parents=True)
    (site / "losslib" / "__init__.py").write_text("from .hinge import Hinge\n")
    (site / "losslib" / "base.py").write_text(
        "from torch import nn\n\n\nclass BaseLoss(nn.Module):\n    def forward(self, a, b):\n"
        "        return self.compute(a, b)\n\n    def compute(self, a, b):\n        raise NotImplementedError\n"
    )
    (site / "losslib" / "hinge.py").write_text(
        "import torch\n\nfrom .base import BaseLoss\n\n\nclass Hinge(BaseLoss):\n    def compute(self, a, b):\n"
        "        d = torch.relu(a - b)\n        return d[d > 0].sum()\n"  # line 9: a dynamic shape
    )
    user = tmp_path / "train.py"
    user.write_text(
        "import torch\nfrom torch import nn\n\nfrom losslib import Hinge\n\n\nclass Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.loss = Hinge()\n\n"
        "    def forward(self, a, b):\n        return self.loss(a, b)\n\n\nmodel = torch.compile(Model())\n"
    )
    overrides = {"follow_libraries": True, "library_paths": (str(site),)}
    assert _library_findings(user, overrides) == {(13, "GM302", "hinge.py", 9)}
    sys.path.insert(0, str(site))
    try:
        namespace: dict[str, object] = {}
        exec(compile(user.read_text().replace("model = torch.compile(Model())\n", ""), str(user), "exec"), namespace)
        torch._dynamo.reset()
        explained = torch._dynamo.explain(namespace["Model"]())(torch.ones(4), torch.zeros(4))
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m == "losslib" or m.startswith("losslib.")]:
            del sys.modules[name]
    assert {(Path(r.user_stack[-1].filename).name, r.user_stack[-1].lineno) for r in explained.break_reasons} == {
        ("hinge.py", 9)
    }


def test_an_option_also_reports_inside_the_library_files(workspace: tuple[Path, Path]) -> None:
    site, user = workspace
    results = api.check_paths([user], overrides={"report_library_files": True}, jobs=1)
    inside = {
        (result.path.name, d.range.start.line + 1, d.code)
        for result in results
        if result.path != user
        for d in result.diagnostics
    }
    assert inside == {("metrics.py", 2, "GM101"), ("metrics.py", 3, "GM201"), ("losses.py", 7, "GM302")}
    assert not any(result.path.name == "unused.py" for result in results)  # nothing compiled reaches it


def write_auglib(site: Path) -> Path:
    """A package binding `Tensor = torch.Tensor` in `auglib.core._backend`, re-exported by
    `auglib.core`, and a `Crop` whose `crop` reads `int(params["n"])` of `params: Dict[str, Tensor]`
    (line 13 of crop.py), as kornia does."""
    (site / "auglib" / "core").mkdir(parents=True)
    (site / "auglib" / "__init__.py").write_text("from .crop import Crop\n")
    (site / "auglib" / "core" / "__init__.py").write_text("from ._backend import Tensor\n")
    (site / "auglib" / "core" / "_backend.py").write_text("import torch\n\nTensor = torch.Tensor\n")
    (site / "auglib" / "crop.py").write_text(
        "from typing import Dict\n\nfrom torch import nn\n\nfrom auglib.core import Tensor\n\n\n"
        "class Crop(nn.Module):\n"
        "    def forward(self, x):\n"
        '        return self.crop(x, {"n": x.new_tensor(2)})\n\n'
        "    def crop(self, x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
        '        n = int(params["n"])\n'
        "        return x[..., :n]\n"
    )
    return site


def write_divlib(site: Path) -> Path:
    """A package whose `safe_divide(num, denom, zero_division=0.0)` tests `zero_division == "warn"
    and torch.any(denom == 0)` (line 5 of compute.py), as torchmetrics' `_safe_divide` does."""
    (site / "divlib").mkdir(parents=True)
    (site / "divlib" / "__init__.py").write_text("from .compute import safe_divide\n")
    (site / "divlib" / "compute.py").write_text(
        "import torch\n\n\ndef safe_divide(num, denom, zero_division=0.0):\n"
        '    if zero_division == "warn" and torch.any(denom == 0):\n'
        "        zero_division = 0.0\n"
        "    return num / denom.clamp(min=1e-6)\n"
    )
    return site


def _explained_sites(site: Path, user: Path, package: str, *inputs: object) -> set[tuple[str, int]]:
    """Dynamo's break sites (file name, line) for the user's `Model` run on `inputs`, the library on `sys.path`."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(site))
    try:
        namespace: dict[str, object] = {}
        exec(compile(user.read_text().replace("model = torch.compile(Model())\n", ""), str(user), "exec"), namespace)
        torch._dynamo.reset()
        explained = torch._dynamo.explain(namespace["Model"]())(*inputs)
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
            del sys.modules[name]
    return {(Path(r.user_stack[-1].filename).name, r.user_stack[-1].lineno) for r in explained.break_reasons}


def _user_model(tmp_path: Path, imports: str, forward: str, layer: str = "nn.Identity()") -> Path:
    """A user's model whose `__init__` makes `self.layer = <layer>` and whose `forward` (line 13) is `forward`."""
    user = tmp_path / "train.py"
    user.write_text(
        f"import torch\nfrom torch import nn\n\n{imports}\n\n\nclass Model(nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n        self.layer = {layer}\n\n"
        f"    def forward(self, x):\n        {forward}\n\n\nmodel = torch.compile(Model())\n"
    )
    return user


def test_a_torch_alias_the_library_re_exports_types_its_annotations(tmp_path: Path) -> None:
    """kornia binds `Tensor = torch.Tensor` in `kornia.core._backend` and its modules import it from
    `kornia.core`: a `Dict[str, Tensor]` parameter annotated with it maps to tensors."""
    torch = pytest.importorskip("torch")
    site = write_auglib(tmp_path / "site")
    user = _user_model(tmp_path, "from auglib import Crop", "return self.layer(x)", "Crop()")
    overrides = {"follow_libraries": True, "library_paths": (str(site),)}
    assert _library_findings(user, overrides) == {(13, "GM301", "crop.py", 13)}
    assert _explained_sites(site, user, "auglib", torch.ones(2, 4)) == {("crop.py", 13)}


def test_a_parameter_no_call_passes_keeps_its_default(tmp_path: Path) -> None:
    """torchmetrics' `_safe_divide(num, denom, zero_division=0.0)` tests `zero_division == "warn"
    and torch.any(denom == 0)`: when no call in the project passes `zero_division`, the tensor
    operand never runs and nothing breaks; when one passes it, the break is reported."""
    torch = pytest.importorskip("torch")
    site = write_divlib(tmp_path / "site")
    overrides = {"follow_libraries": True, "library_paths": (str(site),)}
    inputs = (torch.zeros(3),)
    default = _user_model(tmp_path, "from divlib import safe_divide", "return safe_divide(x + 1, x)")
    assert _library_findings(default, overrides) == set()
    assert _explained_sites(site, default, "divlib", *inputs) == set()
    warned = _user_model(
        tmp_path, "from divlib import safe_divide", 'return safe_divide(x + 1, x, zero_division="warn")'
    )
    assert _library_findings(warned, overrides) == {(13, "GM101", "compute.py", 5)}
    assert _explained_sites(site, warned, "divlib", *inputs) == {("compute.py", 5)}
