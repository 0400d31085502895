"""The cost-aware loop gate: `torch.where` by default (cheaper at the LayerDrop rates models use, and
the title says so); with `layer-skip = "cond"`, `torch.cond` where the skipped layer's block allows
it and `torch.where` elsewhere with the reason in the title; the `torch.cond` form proved in
training, through autograd, under `fullgraph=True`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import run

from graphmend.api import check_source, fix_source
from graphmend.settings import Settings, SettingsError

COND = Settings(layer_skip="cond")
CORPUS = Path(__file__).parent / "dynamo_corpus"
FIXTURES = Path(__file__).parent / "fixtures" / "GM101"


def _titles(path: Path, settings: Settings = COND) -> list[str]:
    return [d.fix.described for d in check_source(path.read_text(), path, settings) if d.fix is not None]


def test_where_form_is_the_default_and_says_why() -> None:
    path = CORPUS / "pos_layerdrop_checkpointing.py"
    (title,) = _titles(path, Settings())
    assert title.startswith(
        "Run the layer always and keep its result only where it is not skipped (`torch.where`), "
        'cheaper than `torch.cond` at LayerDrop up to about 0.3; `layer-skip = "cond"` for higher rates'
    )
    assert "torch.cond(" not in fix_source(path.read_text(), path, unsafe=True).fixed


@pytest.mark.parametrize("name", ["pos_layerdrop_checkpointing", "pos_layerdrop_continue", "pos_layerdrop_branch"])
def test_cond_form_where_the_block_only_replaces_the_state(name: str) -> None:
    (title,) = _titles(CORPUS / f"{name}.py")
    assert title.startswith("Run the layer only where it is not skipped (`torch.cond`")
    fixed = fix_source((CORPUS / f"{name}.py").read_text(), CORPUS / f"{name}.py", COND, unsafe=True).fixed
    assert "torch.cond(" in fixed and "torch.where(" not in fixed


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (
            FIXTURES / "fix_layerdrop_flag.in.py",
            "not `torch.cond`: `layer_outputs` is read after the layer, and a skipped layer has no value for it",
        ),
        (
            FIXTURES / "fix_layerdrop_continue.in.py",
            "not `torch.cond`: the layer's block does more than assign names (`next_cache += (layer_outputs[1],)`)",
        ),
        (CORPUS / "pos_layerdrop_ternary.py", "not `torch.cond`: the flag guards several blocks"),
    ],
    ids=["placeholder-read-after", "collects-caches", "two-tests-of-the-flag"],
)
def test_where_form_states_why_not_cond(path: Path, reason: str) -> None:
    (title,) = _titles(path)
    assert title.startswith(
        "Run the layer always and keep its result only where it is not skipped (`torch.where`), " + reason
    )


def test_cond_form_trains_like_the_original(tmp_path: Path) -> None:
    """Same seed, same layer-drop draws: the fixed encoder compiled with fullgraph=True gives the
    original's outputs and input gradients in training, with gradient checkpointing on and off,
    and runs every layer in eval."""
    torch = pytest.importorskip("torch")
    source = CORPUS / "pos_layerdrop_checkpointing.py"
    fixed_path = tmp_path / "fixed.py"
    fixed_path.write_text(fix_source(source.read_text(), source, COND, unsafe=True).fixed)
    original, fixed = _load(source, "original_program"), _load(fixed_path, "fixed_program")
    for checkpointing in (False, True):
        for training in (True, False):
            results = []
            for program, compiled in ((original, False), (fixed, True)):
                torch.manual_seed(0)
                encoder = program.Encoder().train(training)
                encoder.gradient_checkpointing = checkpointing
                run = torch.compile(encoder, backend="aot_eager", fullgraph=True) if compiled else encoder
                for seed in range(4):
                    x = torch.randn(2, 3, requires_grad=True)
                    torch.manual_seed(seed)
                    out = run(x)
                    out.sum().backward()
                    results.append((out.detach(), x.grad))
            half = len(results) // 2
            for (out_a, grad_a), (out_b, grad_b) in zip(results[:half], results[half:]):
                assert torch.allclose(out_a, out_b) and torch.allclose(grad_a, grad_b)
    torch._dynamo.reset()


def test_layer_skip_setting_from_pyproject(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    program = tmp_path / "model.py"
    program.write_text((CORPUS / "pos_layerdrop_continue.py").read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nlayer-skip = "cond"\n')
    code, _, err = run(capsys, "fix", "--unsafe-fixes", str(program))
    assert code == 0, err
    assert (
        "torch.cond(skip_layer, lambda hidden_states: hidden_states.clone(), run_layer, (hidden_states,))"
        in program.read_text()
    )
    with pytest.raises(SettingsError, match="`layer-skip` must be one of 'where', 'cond'"):
        Settings().merged({"layer-skip": "scan"})


def _load(path: Path, name: str):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
