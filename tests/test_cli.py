"""`graphmend check`: output formats, exit codes, settings, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run

FIGURE1 = ROOT / "tests" / "data" / "figure1_safe.py"
BROKEN = """import torch

@torch.compile
def f(x):
    if x.sum() > 0:
        print(x)
    return x
"""


def test_text_output_and_exit_code(capsys) -> None:
    code, out, _ = run(capsys, "check", str(ROOT / "examples"))
    assert code == 1
    assert f"{ROOT / 'examples' / 'figure1.py'}:10:8: GM101 This `if` tests a tensor value" in out  # no [*]: unsafe
    assert "examples/figure5.py:9:5: GM201" in out
    # the source line under each finding, a caret under its range, and the fix's title
    assert (
        "10 |     if x.sum() > 10:  # graph break: Dynamo cannot know the sum while tracing\n   |        ^^^^^^^^^^^^\n   = help: unsafe fix: Compute both branches"
        in out
    )
    code, out, _ = run(capsys, "check", str(FIGURE1))
    assert f"{FIGURE1}:10:8: GM101 [*] This `if` tests a tensor value" in out  # [*]: a safe fix applies


def test_json_output_has_exactly_the_documented_keys(capsys) -> None:
    code, out, _ = run(capsys, "check", "--output-format", "json", str(FIGURE1))
    assert code == 1
    (item,) = json.loads(out)
    assert set(item) == {
        "code",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "severity",
        "url",
        "fix",
        "related",
        "only_when",
    }
    assert item["url"] == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"
    assert (item["code"], item["line"], item["column"], item["end_line"], item["end_column"]) == (
        "GM101",
        10,
        8,
        10,
        20,
    )
    assert item["severity"] == "warning"
    assert item["fix"] == {
        "title": "Compute both branches and select with `torch.where`",
        "applicability": "safe",
        "hazards": [],
    }


def test_an_unsafe_fix_s_hazards_are_a_list_beside_a_short_title(tmp_path: Path, capsys) -> None:
    """Issue 32: a caveat is data (`fix.hazards`), not packed into the title a quick-fix menu cuts off."""
    (tmp_path / "f.py").write_text(
        "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x.sum())\n    return x @ x\n"
    )
    (item,) = json.loads(run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))[1])
    assert item["fix"]["title"] == "Keep the print in the graph"
    assert item["fix"]["applicability"] == "unsafe"
    assert [hazard.split(":")[0].split(", written")[0] for hazard in item["fix"]["hazards"]] == [
        "under the aot_eager and inductor backends a tensor that requires grad is written without its `grad_fn=`",
        'under CUDA graphs (`mode="reduce-overhead"`) the graph that holds the message is not recorded as a CUDA graph',
        'with `backend="eager"` a non-reentrant `checkpoint` raises in the backward',
        "on fake or meta tensors, compiled, nothing is written (FakeTensorMode, the meta device)",
        "under `torch.utils.checkpoint` the message is written when the forward runs, not again when it is recomputed for the backward, as the original is",
        "torch.jit.script no longer compiles the function",
    ]


def test_clean_directory_exits_zero(tmp_path: Path, capsys) -> None:
    (tmp_path / "ok.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return torch.where(x > 0, x, -x)\n")
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 0 and "No graph breaks found in 1 file." in out


def test_select_and_ignore(tmp_path: Path, capsys) -> None:
    target = tmp_path / "m.py"
    target.write_text(BROKEN)
    assert {d["code"] for d in json.loads(run(capsys, "check", "--output-format", "json", str(target))[1])} == {
        "GM101",
        "GM201",
    }
    out = run(capsys, "check", "--output-format", "json", "--select", "GM2", str(target))[1]
    assert {d["code"] for d in json.loads(out)} == {"GM201"}
    out = run(capsys, "check", "--output-format", "json", "--ignore", "GM101", str(target))[1]
    assert {d["code"] for d in json.loads(out)} == {"GM201"}


def test_pyproject_settings_apply_and_flags_override(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM2"]\nmodule-forward-is-compiled = false\n')
    (tmp_path / "m.py").write_text(BROKEN)
    (tmp_path / "model.py").write_text(
        "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            return x\n        return -x\n"
    )
    out = run(capsys, "check", "--output-format", "json", str(tmp_path))[1]
    assert {(Path(d["path"]).name, d["code"]) for d in json.loads(out)} == {("m.py", "GM101")}
    out = run(capsys, "check", "--output-format", "json", "--module-forward", str(tmp_path))[1]
    assert {(Path(d["path"]).name, d["code"]) for d in json.loads(out)} == {("m.py", "GM101"), ("model.py", "GM101")}


CONFIGURED = """import torch


class Layer(torch.nn.Module):
    def forward(self, h):
        if h.dtype == torch.float16 and torch.isinf(h).any():
            h = torch.clamp(h, min=-1000, max=1000)
        if self.training:
            print("training step", h.sum())
        else:
            print("eval step", h.sum())
        print("always", h.sum())
        return h
"""


@pytest.mark.parametrize(
    ("settings", "left"),
    [
        ("", {6: "h.dtype == torch.float16", 9: "self.training", 11: "not self.training", 12: None}),
        ("assume-training = false", {6: "h.dtype == torch.float16", 11: "not self.training", 12: None}),
        ("assume-training = true", {6: "h.dtype == torch.float16", 9: "self.training", 12: None}),
        ('assume-dtypes = ["bfloat16", "torch.float32"]', {9: "self.training", 11: "not self.training", 12: None}),
        (
            'assume-dtypes = ["half"]\nassume-training = false',
            {6: "h.dtype == torch.float16", 11: "not self.training", 12: None},
        ),
    ],
)
def test_settings_that_say_how_the_code_runs_hide_what_cannot_happen(
    tmp_path: Path, capsys, settings: str, left: dict
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.graphmend]\n{settings}\n")
    (tmp_path / "layer.py").write_text(CONFIGURED)
    items = json.loads(run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))[1])
    assert {d["line"]: (d["only_when"][0] if d["only_when"] else None) for d in items} == left


SWITCHES = """import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.checkpointing = False
        self.verbose = False

    def enable_verbose(self):
        self.verbose = True

    def forward(self, x):
        if self.checkpointing:
            print("checkpointing", x)
        if self.verbose:
            print("verbose", x)
        return x
"""


def test_a_break_behind_a_switch_left_off_is_information(tmp_path: Path, capsys) -> None:
    """Noise (issue 32): a break that needs a flag only `__init__` sets, to False, is not the one a
    plain compile meets: information, with the switch named. A flag a method turns on stays a warning."""
    (tmp_path / "block.py").write_text(SWITCHES)
    code, out, _ = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))
    items = {d["line"]: d for d in json.loads(out)}
    assert (items[15]["severity"], items[15]["off_by_default"]) == ("information", "self.checkpointing")
    assert items[17]["severity"] == "warning" and "off_by_default" not in items[17]
    text = run(capsys, "check", "--no-cache", str(tmp_path))[1]
    assert "= note: a plain compile does not meet it: `self.checkpointing` is false by default" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[tool.graphmend\nselect = ["GM"]\n', "invalid TOML"),
        ('[tool.graphmend]\nselcet = ["GM"]\n', "unknown setting `selcet`"),
        ('[tool.graphmend]\nselect = ["E501"]\n', "not graphmend's"),
        ('[tool.graphmend]\nassume-dtypes = ["fp8"]\n', "torch dtype names"),
        ('[tool.graphmend]\nassume-training = "no"\n', "true or false"),
    ],
)
def test_bad_pyproject_is_a_clear_error(tmp_path: Path, capsys, content: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "m.py").write_text(BROKEN)
    code, out, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and message in err and "Traceback" not in err


def test_syntax_error_is_reported_and_the_run_continues(tmp_path: Path, capsys) -> None:
    (tmp_path / "a_broken.py").write_text("import torch\ndef f(x:\n    return x\n")
    (tmp_path / "b_model.py").write_text(BROKEN)
    code, out, _ = run(capsys, "check", "--output-format", "json", str(tmp_path))
    items = json.loads(out)
    assert code == 1
    assert [(Path(d["path"]).name, d["code"], d["severity"]) for d in items if d["code"] == "GM001"] == [
        ("a_broken.py", "GM001", "error")
    ]
    assert {d["code"] for d in items if d["path"].endswith("b_model.py")} == {"GM101", "GM201"}


def test_binary_and_undecodable_files_are_skipped_with_a_warning(tmp_path: Path, capsys) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02torch")
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = run(capsys, "check", str(tmp_path))
    assert code == 0
    assert "blob.py: binary file" in err and "latin.py: not valid utf-8" in err
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_skips_virtualenvs_and_vcs_folders(tmp_path: Path, capsys) -> None:
    for folder in (".git", ".venv", "env_custom", "build"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(BROKEN)
    (tmp_path / "env_custom" / "pyvenv.cfg").write_text("home = /usr\n")
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 0 and "in 0 files" in out


def test_usage_errors_exit_two(capsys) -> None:
    assert run(capsys, "check", "/no/such/path")[0] == 2
    assert run(capsys, "check", "--output-format", "yaml")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_version_and_console_script() -> None:
    result = subprocess.run([sys.executable, "-m", "graphmend", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("graphmend ")


def test_rules_listing_is_complete(capsys) -> None:
    code, out, _ = run(capsys, "rules", "--output-format", "json")
    assert code == 0
    assert [r["code"] for r in json.loads(out)] == [
        "GM101",
        "GM102",
        "GM103",
        "GM201",
        "GM202",
        "GM203",
        "GM204",
        "GM301",
        "GM302",
        "GM303",
        "GM304",
        "GM305",
        "GM306",
        "GM307",
        "GM308",
        "GM309",
        "GM310",
        "GM311",
        "GM312",
        "GM313",
        "GM314",
        "GM315",
        "GM316",
        "GM317",
        "GM318",
        "GM319",
        "GM320",
        "GM401",
        "GM402",
        "GM403",
        "GM404",
        "GM405",
        "GM501",
        "GM502",
        "GM503",
        "GM504",
        "GM601",
        "GM602",
        "GM603",
        "GM604",
        "GM605",
    ]


def test_cache_skips_unchanged_files_and_notices_changes(tmp_path: Path, capsys) -> None:
    target = tmp_path / "m.py"
    target.write_text(BROKEN)
    cache = tmp_path / "cache"
    first = run(capsys, "check", "--output-format", "json", "--cache-dir", str(cache), str(target))[1]
    entries = list(cache.glob("*/diagnostics/*/*.json"))
    assert len(entries) == 1
    assert run(capsys, "check", "--output-format", "json", "--cache-dir", str(cache), str(target))[1] == first
    # A cached result is what is reported: tamper with it to prove the file was not analysed again.
    entries[0].write_text("[]")
    assert json.loads(run(capsys, "check", "--output-format", "json", "--cache-dir", str(cache), str(target))[1]) == []
    target.write_text(BROKEN.replace("print(x)", "print(x, x)"))  # changed content: a miss
    assert {
        d["code"]
        for d in json.loads(run(capsys, "check", "--output-format", "json", "--cache-dir", str(cache), str(target))[1])
    } == {"GM101", "GM201"}
    out = run(capsys, "check", "--output-format", "json", "--cache-dir", str(cache), "--select", "GM2", str(target))[1]
    assert {d["code"] for d in json.loads(out)} == {"GM201"}  # other settings: a miss
    assert run(capsys, "check", "--no-cache", "--output-format", "json", "--cache-dir", str(cache), str(target))[0] == 1


COPIED_LAYER = ROOT / "tests" / "data" / "copied_transformers_layer.py"


def test_code_copied_out_of_transformers(capsys) -> None:  # noqa: ANN001
    """A layer under a base from another package is a module; a relative `is_torchdynamo_compiling`
    is transformers' (issue 18)."""
    found = json.loads(run(capsys, "check", "--output-format", "json", str(COPIED_LAYER))[1])
    assert [(d["code"], d["line"]) for d in found] == [("GM101", 17)]
    compiled, *chain = found[0]["related"]
    assert "`FooLayer` is taken for an nn.Module" in compiled["message"] and compiled["kind"] == "compiled"
    # Why `h` is a tensor, step by step (issue 18, item 5).
    assert [(r["line"], r["kind"], r["message"]) for r in chain] == [
        (16, "value", "`h` ← `self.proj(x)`"),
        (15, "value", "`x`: a parameter of `FooLayer.forward`"),
    ]


def test_module_bases_setting_names_a_base_the_project_sees_as_plain(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    (tmp_path / "base.py").write_text(
        "from ext import make_base\n\nOpaque = make_base()\n\n\nclass Base(Opaque):\n    pass\n"
    )
    (tmp_path / "layer.py").write_text(
        "import torch\n\nfrom base import Base\n\n\nclass Layer(Base):\n    def forward(self, h):\n"
        "        if h.sum() > 0:\n            h = h - 1\n        return h\n"
    )
    assert json.loads(run(capsys, "check", "--output-format", "json", str(tmp_path))[1]) == []
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nmodule-bases = ["base.Base"]\n')
    found = json.loads(run(capsys, "check", "--output-format", "json", str(tmp_path))[1])
    assert [(d["code"], d["line"]) for d in found] == [("GM101", 8)]
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nmodule-bases = ["base Base"]\n')
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and "`module-bases` must be a list of qualified class names" in err


def test_findings_in_a_forward_a_class_decorator_swaps_say_so(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """transformers 5.x's `@use_experts_implementation` sets `forward` at run time: a finding in the
    decorated class's own `forward` breaks only when the decorator keeps it (issue 18, item 6)."""
    (tmp_path / "kernels.py").write_text(
        "def fast_forward(self, x):\n    return x\n\n\n"
        "def swap_forward(cls):\n    def wrapper(cls):\n        cls.forward = fast_forward\n        return cls\n    return wrapper(cls)\n\n\n"
        "REGISTRY = []\n\n\ndef register(cls):\n    REGISTRY.append(cls)\n    return cls\n"
    )
    (tmp_path / "model.py").write_text(
        "import torch\n\nfrom kernels import register, swap_forward\n\n\n"
        "@swap_forward\nclass Experts(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            x = x - 1\n        return x\n\n\n"
        "@register\nclass Plain(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            x = x - 1\n        return x\n"
    )
    found = json.loads(run(capsys, "check", "--output-format", "json", str(tmp_path))[1])
    assert [(d["line"], d["only_when"]) for d in found] == [(9, ["@swap_forward keeps Experts.forward"]), (17, [])]
    assert found[0]["message"] == "This `if` tests a tensor value; select with `torch.where` instead"


SUBMODULE_PRINT = """import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        print(x)
        return x
"""


def test_torch_version_setting_and_flag(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`torch-version` (pyproject) and `--torch-version` (flag, wins): a torch the in-graph operator
    was not measured on gets a deferred print; a malformed version is a settings error (exit 2),
    said in one line."""
    (tmp_path / "net.py").write_text(SUBMODULE_PRINT)

    def title(*flags: str) -> str:
        out = run(capsys, "check", "--output-format", "json", *flags, str(tmp_path))[1]
        (finding,) = json.loads(out)
        return finding["fix"]["title"]

    assert title().startswith("Keep the print in the graph")  # the torch installed here: 2.13
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\ntorch-version = "2.8"\n')
    assert title().startswith("Defer the print")
    assert title("--torch-version", "2.13").startswith("Keep the print in the graph")
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\ntorch-version = "latest"\n')
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and 'must be a torch release, e.g. "2.10"' in err


def test_module_level_dynamo_settings_of_the_compiling_file_hold_for_what_it_compiles(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`torch._dynamo.config.capture_scalar_outputs = True` in train.py holds process-wide: the
    `.item()` of model.py's `forward`, which train.py compiles, no longer breaks."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        scale = x.max().item()\n        return x / scale\n"
    )
    train = "import torch\n\nfrom .model import Model\n\n{setting}model = torch.compile(Model())\n"
    (package / "train.py").write_text(train.format(setting=""))
    out = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))[1]
    assert [d["code"] for d in json.loads(out)] == ["GM301"]
    (package / "train.py").write_text(train.format(setting="torch._dynamo.config.capture_scalar_outputs = True\n\n"))
    out = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))[1]
    assert json.loads(out) == []


def test_a_call_a_later_torch_traces_is_not_reported_for_it(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`random.seed` breaks on torch 2.13 and not on 2.14.1 (the corpus under 2.14.1)."""
    (tmp_path / "seeded.py").write_text(
        "import random\n\nimport torch\n\n\n@torch.compile\ndef f(x):\n    random.seed(0)\n    return x * 2\n"
    )

    def codes(*flags: str) -> list[str]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", *flags, str(tmp_path))[1]
        return [d["code"] for d in json.loads(out)]

    assert codes("--torch-version", "2.13") == ["GM307"]
    assert codes("--torch-version", "2.14") == []


def test_a_context_manager_made_outside_breaks_on_the_releases_measured(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Issue 56: a `with` on a context manager made outside the compiled code breaks from 2.11 to
    2.13 for a module-level one and from 2.9 to 2.13 for one a module's `__init__` made; 2.14.1
    enters both (`dynamo_corpus/pos_implicit_enter.py` under each release)."""
    (tmp_path / "scoped.py").write_text(
        "import torch\n\n\nclass Quiet:\n    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *exc):\n        return False\n\n\nQUIET = Quiet()\n\n\n"
        "class Block(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scope = Quiet()\n\n    def forward(self, x):\n        with self.scope:\n"
        "            x = x + 1\n        with QUIET:\n            return x * 2\n"
    )

    def lines(*flags: str) -> list[int]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", *flags, str(tmp_path))[1]
        return [d["line"] for d in json.loads(out) if d["code"] == "GM319"]

    assert lines("--torch-version", "2.13") == [21, 23]
    assert lines("--torch-version", "2.10") == [21]
    assert lines("--torch-version", "2.14") == []


def test_forms_whose_break_depends_on_the_release(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Measured on the corpus under each release from 2.9.1 to 2.14.1: a `class` statement breaks from
    2.10, an unhandled `raise` from 2.11, and a registered print called with a keyword from 2.14."""
    (tmp_path / "forms.py").write_text(
        "import torch\n\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n\n\n"
        "@torch.compile\ndef f(x):\n    class Holder:\n        scale = 2.0\n\n"
        "    print('step', sep='')\n    y = x * Holder.scale\n    raise RuntimeError('always')\n"
    )

    def codes(version: str) -> list[str]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", "--torch-version", version, str(tmp_path))[
            1
        ]
        return sorted(d["code"] for d in json.loads(out))

    assert codes("2.9") == []
    assert codes("2.10") == ["GM316"]
    assert codes("2.13") == ["GM316", "GM318"]
    assert codes("2.14") == ["GM201", "GM316", "GM318"]


def test_an_operator_on_an_object_breaks_only_where_measured(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`a @ b` on an object of a user class: torch 2.11 to 2.13 break, 2.9 and 2.14 run its method."""
    (tmp_path / "vectors.py").write_text(
        "import torch\n\n\nclass V:\n    def __init__(self, t):\n        self.t = t\n\n"
        "    def __matmul__(self, other):\n        return self.t * other.t\n\n\n"
        "@torch.compile\ndef f(x):\n    v = V(x * 2)\n    return v @ v\n"
    )

    def codes(version: str) -> list[str]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", "--torch-version", version, str(tmp_path))[
            1
        ]
        return [d["code"] for d in json.loads(out)]

    assert codes("2.9") == []
    assert codes("2.11") == codes("2.13") == ["GM320"]
    assert codes("2.14") == []


def test_what_torch_2_9_traces_is_not_reported_for_it(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`.tolist()` and a tensor slice bound break on torch 2.13 and not on 2.9.1; on 2.10.0 only
    `.tolist()` does (the corpus under each release, `benchmarks/torch_versions.py`)."""
    (tmp_path / "split.py").write_text(
        "import torch\n\n\n@torch.compile\ndef f(x, lengths: torch.Tensor):\n"
        "    sizes = lengths.tolist()\n    head = x[: lengths.sum()]\n    return torch.split(x, sizes), head\n"
    )

    def lines(*flags: str) -> list[tuple[str, int]]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", *flags, str(tmp_path))[1]
        return [(d["code"], d["line"]) for d in json.loads(out)]

    assert lines("--torch-version", "2.13") == [("GM301", 6), ("GM309", 7)]
    assert lines("--torch-version", "2.9") == []
    assert lines("--torch-version", "2.10") == [("GM301", 6)]
    assert lines("--torch-version", "2.11") == [("GM301", 6), ("GM309", 7)]
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.9.1+cpu\n")  # the project's pin decides
    assert lines() == []
    assert lines("--torch-version", "2.13") == [("GM301", 6), ("GM309", 7)]  # the flag wins


def test_a_force_eager_stance_compiles_nothing(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`torch.compiler.set_stance("force_eager")` at module level: nothing compiles, nothing breaks
    (measured on torch 2.13: no graph, no break), in the file and in what its compile sites compile
    elsewhere; the default stance changes nothing."""
    (tmp_path / "model.py").write_text("import torch\n\n\ndef step(x):\n    print(x)\n    return x * 2\n")
    train = "import torch\n\nfrom model import step\n\ntorch.compiler.set_stance({stance!r})\ncompiled = torch.compile(step)\n"

    def codes() -> list[str]:
        out = run(capsys, "check", "--output-format", "json", "--no-cache", "--select", "GM2", str(tmp_path))[1]
        return [d["code"] for d in json.loads(out)]

    (tmp_path / "train.py").write_text(train.format(stance="default"))
    assert codes() == ["GM201"]
    (tmp_path / "train.py").write_text(train.format(stance="force_eager"))
    assert codes() == []


def test_check_counts_files_with_findings_and_what_fix_would_take(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Ruff's summary: findings in how many of the files checked, and `[*] N fixable with --fix`."""
    (tmp_path / "model.py").write_text(FIGURE1.read_text())
    (tmp_path / "clean.py").write_text("import torch\n")
    (tmp_path / "other.py").write_text("x = 1\n")
    code, out, _ = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 1
    assert out.splitlines()[-2:] == ["Found 1 graph break in 1 file (3 checked).", "[*] 1 fixable with `--fix`."]


def test_check_fix_applies_fixes_and_reports_what_remains(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    target = tmp_path / "model.py"
    target.write_text(FIGURE1.read_text())
    code, out, _ = run(capsys, "check", "--no-cache", "--diff", str(target))
    assert (
        code == 1 and "model.py" in out.splitlines()[1] and target.read_text() == FIGURE1.read_text()
    )  # writes nothing
    code, out, _ = run(capsys, "check", "--no-cache", "--fix", str(target))
    assert code == 0 and out.splitlines()[-1] == "No graph breaks left in 1 file (1 fixed)."
    assert "torch.where" in target.read_text()


def test_conditions_read_simplified(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """The `else` side of `if isinstance(c, Cache) and not isinstance(c, Fresh):` reads as it holds,
    `not` pushed inward (T5's cache check used to read `not (isinstance(...) and (not ...))`)."""
    (tmp_path / "layer.py").write_text(
        "import logging\n\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n\n"
        "class Cache:\n    pass\n\n\nclass Fresh(Cache):\n    pass\n\n\n"
        "class Layer(torch.nn.Module):\n    def forward(self, x, cache=None):\n"
        "        if isinstance(cache, Cache) and not isinstance(cache, Fresh):\n            return x\n"
        "        else:\n            logger.warning('no usable cache')\n        return x * 2\n"
    )
    out = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))[1]
    [finding] = json.loads(out)
    assert finding["only_when"] == ["not isinstance(cache, Cache) or isinstance(cache, Fresh)"]
    text = run(capsys, "check", "--no-cache", str(tmp_path))[1]
    assert "= note: breaks only when `not isinstance(cache, Cache) or isinstance(cache, Fresh)`" in text


@pytest.mark.parametrize("option", ["--select", "--ignore"])
@pytest.mark.parametrize("codes", ["GM999", "GM1,GM7", "E501"])
def test_a_code_that_names_no_rule_is_an_error_naming_the_known_ones(option: str, codes: str, capsys) -> None:
    """Issue 39: `--select GM999` reported nothing and exited 0, so a typo passed CI silently."""
    code, out, err = run(capsys, "check", option, codes, str(ROOT / "examples"))
    assert code == 2 and not out
    unknown = [c for c in codes.split(",") if c != "GM1"]
    assert f"{', '.join(unknown)}: no graphmend rule has" in err
    assert "known: GM001, GM002, GM101" in err and "GM405" in err


def test_a_prefix_or_a_lower_case_code_selects(capsys) -> None:
    assert run(capsys, "check", "--select", "gm1", "--output-format", "concise", str(ROOT / "examples"))[0] == 1
    assert run(capsys, "check", "--select", "GM3", str(ROOT / "examples"))[0] == 0
