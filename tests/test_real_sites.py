"""The real sites of issue 30, copied from the libraries they were found in: after `graphmend fix
--unsafe-fixes` each behaves the same under torch.compile (outputs, gradients, exceptions, printed
text) on inputs that take every branch, or its fix is refused with the true reason, or (GM304) the
one difference is the one its title names."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import types
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from graphmend.api import check_source, fix_source  # noqa: E402
from graphmend.cli import main as cli_main  # noqa: E402

# One pytest-xdist worker runs the whole file: the sites fixed once for the module.
pytestmark = pytest.mark.xdist_group("test_real_sites")

SITES = """import torch


# A knowledge-distillation loss of a fine-tuning library: a batch whose labels are all ignored
# returns zero, and `num / sum_masks` must not write NaN into the gradients.
@torch.compile(backend="eager")
def kd_loss(student, teacher, labels):
    mask = labels != -100
    sum_masks = mask.sum()
    if sum_masks == 0:
        return torch.tensor(0.0)
    num = ((student - teacher) ** 2 * mask).sum()
    return num / sum_masks


# transformers 5.4.0 timesfm/modeling_timesfm.py:777: `torch.maximum` with a Python number raises.
@torch.compile(backend="eager")
def timesfm(mean_outputs, inputs, truncate_negative: bool = False):
    inp_min = torch.min(inputs)
    if inp_min >= 0 and truncate_negative:
        mean_outputs = torch.maximum(mean_outputs, 0.0)
    return mean_outputs * 2


@torch.compile(backend="eager")
def inverse(a):
    if torch.linalg.det(a).abs() > 1e-6:
        a = torch.linalg.inv(a)
    return a * 2


@torch.compile(backend="eager")
def negated_mask(x):
    m = x > 0
    if x.sum() > 100:
        y = -m
    else:
        y = m
    return y


@torch.compile(backend="eager")
def out_argument(x, buf):
    if x.sum() > 0:
        torch.add(x, 1, out=buf)
    return x * 2


# kornia 0.9.0 augmentation/utils/helpers.py:198: `reference_shape` is a `torch.Size` at run time.
@torch.compile(backend="eager")
def kornia_shape(input: torch.Tensor, reference_shape: torch.Tensor) -> torch.Tensor:
    B = reference_shape[-4] if len(reference_shape) >= 4 else None
    if len(input.shape) == 3:
        input = input.unsqueeze(1) if B == input.shape[-3] else input.unsqueeze(0)
    return input * 2


# transformers 4.49.0 vits/modeling_vits.py:313
@torch.compile(backend="eager")
def vits(a, b, c):
    discriminant = b.pow(2) - 4 * a * c
    if not (discriminant >= 0).all():
        raise RuntimeError(f"invalid discriminant {discriminant}")
    return torch.sqrt(discriminant)


# transformers 4.49.0 deta/modeling_deta.py:2489
@torch.compile(backend="eager")
def deta(boxes1):
    if not (boxes1[:, 2:] >= boxes1[:, :2]).all():
        raise ValueError(f"boxes1 must be in [x0, y0, x1, y1] (corner) format, but got {boxes1}")
    return boxes1 * 2
"""

# Inputs per function that take every branch (and the excluded values of every guard).
INPUTS = {
    "kd_loss": [
        (torch.randn(4), torch.randn(4), torch.tensor([-100, -100, -100, -100])),
        (torch.randn(4), torch.randn(4), torch.tensor([1, -100, 2, -100])),
    ],
    "timesfm": [(torch.randn(3), torch.rand(3), False), (torch.randn(3), -torch.rand(3), False)],
    "inverse": [(torch.eye(2) * 2,), (torch.zeros(2, 2),)],
    "negated_mask": [(torch.ones(3),), (torch.full((3,), 50.0),)],
    "out_argument": [(torch.ones(2), torch.zeros(2)), (-torch.ones(2), torch.zeros(2))],
    "kornia_shape": [
        (torch.ones(2, 4, 4), torch.Size([2, 1, 4, 4])),
        (torch.ones(2, 4, 4), torch.Size([3, 1, 4, 4])),
        (torch.ones(2, 4, 4), torch.Size([1, 4, 4])),
    ],
    "vits": [(torch.ones(3), torch.full((3,), 3.0), torch.ones(3))],
    "deta": [(torch.tensor([[0.0, 0.0, 1.0, 1.0]]),)],
}
# The fix is refused, with these words.
REFUSED = {
    "timesfm": "`torch.maximum` with a Python number, which raises TypeError",
    "inverse": "`torch.linalg.inv`, which raises on values the condition may exclude",
    "negated_mask": "negates a bool tensor",
    "out_argument": "writes into `buf` (`out=`)",
}


def _load(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _observe(function: object, inputs: tuple) -> tuple:
    """(output, exception type, gradients of the float inputs, printed text) of one call."""
    torch._dynamo.reset()
    arguments = [
        a.clone().requires_grad_() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in inputs
    ]
    printed = io.StringIO()
    output, error, gradients = None, None, None
    with contextlib.redirect_stdout(printed):
        try:
            output = function(*arguments)
        except Exception as exception:  # noqa: BLE001 - the exception is the behaviour compared
            error = type(exception)
    if isinstance(output, torch.Tensor) and output.requires_grad:
        output.float().sum().backward()
        gradients = [a.grad for a in arguments if isinstance(a, torch.Tensor) and a.requires_grad]
    value = output.detach() if isinstance(output, torch.Tensor) else output
    return value, error, gradients, printed.getvalue()


def _same(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, equal_nan=True)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, types.ModuleType, dict]:
    folder = tmp_path_factory.mktemp("sites")
    before = folder / "sites_before.py"
    after = folder / "sites_after.py"
    before.write_text(SITES, encoding="utf-8")
    after.write_text(SITES, encoding="utf-8")
    assert cli_main(["fix", str(after), "--unsafe-fixes"]) in (0, 1)
    diagnostics = {d.range.start.line + 1: d for d in check_source(SITES, before)}
    return _load(before), _load(after), diagnostics


def _diagnostic_in(name: str, diagnostics: dict) -> object:
    start = SITES.splitlines().index(next(line for line in SITES.splitlines() if line.startswith(f"def {name}(")))
    return next(d for line, d in sorted(diagnostics.items()) if line > start + 1)


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_real_site(name: str, fixed: tuple[types.ModuleType, types.ModuleType, dict]) -> None:
    before, after, diagnostics = fixed
    diagnostic = _diagnostic_in(name, diagnostics)
    if name in REFUSED:
        assert diagnostic.fix is None and REFUSED[name] in diagnostic.data.no_fix
    else:
        assert diagnostic.fix is not None
    for inputs in INPUTS[name]:
        old = _observe(getattr(before, name), inputs)
        new = _observe(getattr(after, name), inputs)
        assert _same(old[0], new[0]) and old[1] == new[1], f"{name}{inputs}: outputs or exceptions differ"
        assert (old[2] is None) == (new[2] is None) or "zero gradient" in diagnostic.fix.described
        if old[2] is not None and new[2] is not None:
            assert _same(old[2], new[2]), f"{name}{inputs}: gradients differ"
        assert old[3] == new[3]


@pytest.mark.parametrize(
    ("name", "bad_input", "original_error"),
    [
        ("vits", (torch.ones(3), torch.zeros(3), torch.ones(3)), RuntimeError),
        ("deta", (torch.tensor([[1.0, 1.0, 0.0, 0.0]]),), ValueError),
    ],
)
def test_gm304_differs_only_as_its_title_says(
    name: str, bad_input: tuple, original_error: type, fixed: tuple[types.ModuleType, types.ModuleType, dict]
) -> None:
    before, after, diagnostics = fixed
    title = _diagnostic_in(name, diagnostics).fix.described
    assert "raises RuntimeError, possibly later, instead of the original exception" in title
    assert _observe(getattr(before, name), bad_input)[1] is original_error
    assert _observe(getattr(after, name), bad_input)[1] is RuntimeError


def test_the_annotation_claim_is_kept_for_python_values() -> None:
    text = fix_source(SITES, Path("sites.py"), unsafe=True).fixed
    assert "if isinstance(B, torch.Tensor) else (input.unsqueeze(1) if B == input.shape[-3]" in text


# transformers 4.49.0 `phi3/modeling_phi3.py:351` (and 38 copies): the dynamic rope update compares
# a full reduction with module state that holds one number on every path.
DYNAMIC_ROPE = """import torch


class Phi3Config:
    max_position_embeddings = 8


class Rotary(torch.nn.Module):
    def __init__(self, config: Phi3Config, window, length: int = 4):
        super().__init__()
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        self.window = window
        self.length = length
        self.register_buffer("limit", torch.tensor([4, 4]), persistent=False)
        self.scale = 1.0

    @torch.compile
    def forward(self, x, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:
            self.scale = 2.0
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:
            self.scale = 1.0
            self.max_seq_len_cached = self.original_max_seq_len
        if seq_len > self.length:
            x = x * 2
        if seq_len > self.window:
            x = x * 3
        if seq_len > self.limit:
            x = x * 4
        return x * self.scale
"""


def test_a_condition_on_module_state_holding_one_number_is_one_element(tmp_path: Path) -> None:
    """Issue 54: `self.max_seq_len_cached` is set from a `...Config` field in `__init__` and to the
    0-d `seq_len` or another such attribute later, and `self.length` from a parameter annotated
    `int`: conditions on them have one element, and the fix no longer names that hazard. An
    attribute set from an unannotated parameter (`self.window`) or registered as a buffer
    (`self.limit`, two elements) keeps it."""
    element = "the condition may have more than one element"
    named = {
        d.range.start.line + 1: element in d.fix.hazards
        for d in check_source(DYNAMIC_ROPE, tmp_path / "rope.py")
        if d.code == "GM101" and d.fix is not None
    }
    assert named == {21: False, 24: False, 27: False, 29: True, 31: True}


CONFIGURED = """import torch


class TinyConfig:
    def __init__(self, **kwargs):
        self.output_attentions = kwargs.get("output_attentions", False)


class Configured(torch.nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config

    @torch.compile
    def forward(self, x: torch.Tensor):
        print("total", x.sum())
        if self.config.output_attentions:
            return x
        return x + 1


class Plain(torch.nn.Module):
    def __init__(self, config: dict):
        super().__init__()
        self.config = config

    @torch.compile
    def forward(self, x: torch.Tensor):
        print("total", x.sum())
        return x + 1
"""


def test_a_forward_reading_its_configuration_never_scripts_so_the_fix_does_not_say_it_stops(tmp_path: Path) -> None:
    """Issue 54: a method that reads `self.config`, set from a `...Config` parameter (or by
    transformers' PreTrainedModel), fails `torch.jit.script` before any fix (TorchScript cannot type
    the attribute: measured here), so "torch.jit.script no longer compiles the function" is not named
    there (8 of 8 such hazards in the judged sample could not happen); an attribute annotated `dict`
    keeps it."""
    path = tmp_path / "configured.py"
    path.write_text(CONFIGURED, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("configured", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(RuntimeError, match="failed to convert Python type"):
        torch.jit.script(module.Configured(module.TinyConfig()))
    scripted = {
        d.range.start.line + 1: any("torch.jit.script" in h for h in d.fix.hazards)
        for d in check_source(CONFIGURED, path)
        if d.code == "GM201" and d.fix is not None
    }
    assert scripted == {16: False, 29: True}


FILTERING = """import torch


class Filtering(torch.nn.Module):
    @torch.compile
    def forward(self, x: torch.Tensor):
        print("total", x.sum())
        kept = [v for v in (x, x + 1) if v is not None]
        return kept[0]


class Plain(torch.nn.Module):
    @torch.compile
    def forward(self, x: torch.Tensor):
        print("total", x.sum())
        kept = [v for v in (x, x + 1)]
        return kept[0]
"""


def test_a_comprehension_with_an_if_never_scripts_so_the_fix_does_not_say_it_stops(tmp_path: Path) -> None:
    """Issue 54: TorchScript rejects a comprehension with an `if` (measured: transformers' encoders
    collect their outputs so, and fail `torch.jit.script` before any fix), so "torch.jit.script no
    longer compiles the function" is not named there; the same comprehension without `if` keeps it."""
    path = tmp_path / "filtering.py"
    path.write_text(FILTERING, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("filtering", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(torch.jit.frontend.NotSupportedError, match="Comprehension ifs are not supported"):
        torch.jit.script(module.Filtering())
    scripted = {
        d.range.start.line + 1: any("torch.jit.script" in h for h in d.fix.hazards)
        for d in check_source(FILTERING, path)
        if d.code == "GM201" and d.fix is not None
    }
    assert scripted == {7: False, 15: True}


ROTARY = """import torch


class Rotary(torch.nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_seq_len_cached = 8

    def _update(self, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:
            self.register_buffer("inv_freq", self.inv_freq / 2, persistent=False)
            self.max_seq_len_cached = seq_len

    @torch.no_grad()
    def forward(self, x, position_ids):
        self._update(position_ids)
        freqs = position_ids[..., None].float() * self.inv_freq
        return x * freqs.cos().sum()
"""


@pytest.mark.parametrize("reader", ["", "persistent", "with grad"])
def test_an_inference_tensor_in_state_nothing_reads_with_grad_is_not_named(tmp_path: Path, reader: str) -> None:
    """Issue 54: a merged store holds an inference tensor after a call under `inference_mode`. Out of
    the state dict (a non-persistent buffer, a plain attribute) and read only by a `@torch.no_grad()`
    forward and the update it calls, as in transformers' rotary embeddings, nothing notices (run
    here: the fixed module under `inference_mode`, then called normally and reloaded, gives what the
    original gives); a persistent buffer, or a read with grad, keeps the hazard."""
    source = ROTARY
    if reader == "persistent":
        source = source.replace("inv_freq, persistent=False)", "inv_freq)")
    elif reader == "with grad":
        source += "\n    def scaled(self, x):\n        return x * self.inv_freq\n"
    path = tmp_path / "rotary.py"
    hazards = [h for d in check_source(source, path) if d.fix is not None for h in d.fix.hazards]
    assert any("keeps a tensor computed in the graph" in h for h in hazards)
    named = any("`self.inv_freq` is assigned on every call" in h for h in hazards)
    assert named == bool(reader)
    if reader:
        return
    fixed = fix_source(source, path, unsafe=True).fixed
    assert "torch.where" in fixed and "if seq_len > self.max_seq_len_cached" not in fixed
    modules: list[list[Any]] = []
    for text in (source, fixed):
        assert "inference_mode" not in text
        module = _module_from(tmp_path / f"rotary_{len(modules)}.py", text)
        model = module.Rotary()
        outputs = []
        with torch.inference_mode():
            outputs.append(model(torch.ones(2, 2), torch.arange(12)[None, :].expand(2, 12)))
        outputs.append(model(torch.ones(2, 2), torch.arange(3)[None, :].expand(2, 3)))
        model.load_state_dict(model.state_dict())
        outputs.append(model(torch.ones(2, 2), torch.arange(16)[None, :].expand(2, 16)))
        modules.append(outputs)
    assert all(torch.equal(a, b) for a, b in zip(*modules))


def _module_from(path: Path, text: str) -> Any:
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
