"""The GM4xx rewrites, proved on the CPU with real torch: each fixed program computes what the
original did, compiles to no more graphs (`backend="eager"` counts them), and the recompilation
rule's fix ends the recompilations it reports. Whether inductor then records a CUDA graph needs a
GPU: `benchmarks/cudagraph_proof.py` measures it there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, run
from dynamo_harness import load_program

from graphmend.api import check_source
from graphmend.rules import RULES_BY_CODE
from graphmend.settings import Settings, SettingsError

torch = pytest.importorskip("torch")
testing = pytest.importorskip("torch._dynamo.testing")

CORPUS = Path(__file__).parent / "dynamo_corpus"


def _pair(code: str, case: str) -> tuple[object, object]:
    folder = FIXTURES / code
    return load_program(folder / f"{case}.in.py"), load_program(folder / f"{case}.out.py")


def _compiled(fn: object) -> tuple[object, object]:
    torch._dynamo.reset()
    counter = testing.CompileCounter()
    return torch.compile(fn, backend=counter), counter


def _original(fn: object) -> object:
    return getattr(fn, "_torchdynamo_orig_callable", fn)


@pytest.mark.parametrize("case", ["fix_counter_buffer", "fix_step_counter"])
def test_a_changing_number_recompiles_and_its_buffer_does_not(case: str) -> None:
    before, after = _pair("GM405", case)
    x = torch.randn(3, dtype=torch.float64)
    results = {}
    for name, program in (("before", before), ("after", after)):
        reference = program.Warmup()
        compiled, counter = _compiled(program.Warmup())
        outputs = [compiled(x) for _ in range(12)]
        expected = [reference(x) for _ in range(12)]
        assert all(torch.equal(a, b) for a, b in zip(outputs, expected))
        results[name] = (counter.frame_count, [o.clone() for o in expected])
    assert results["before"][0] == 8  # recompiled until the limit, then eager
    assert results["after"][0] == 1
    assert all(torch.equal(a, b) for a, b in zip(results["before"][1], results["after"][1]))


@pytest.mark.parametrize(
    ("case", "cls", "attribute"),
    [
        ("fix_register_buffer", "Scaled", "scale"),
        ("fix_scalar_buffer", "Scaled", "scale"),
        ("fix_moved_table", "Shifted", "offsets"),
    ],
)
def test_a_registered_buffer_moves_with_the_module_and_keeps_the_state_dict(
    case: str, cls: str, attribute: str
) -> None:
    before, after = _pair("GM401", case)
    torch.manual_seed(0)
    original = getattr(before, cls)(4)
    fixed = getattr(after, cls)(4)
    fixed.load_state_dict(original.state_dict())  # the same keys: the buffer is not persistent
    assert attribute not in dict(original.named_buffers()) and attribute in dict(fixed.named_buffers())
    assert set(original.state_dict()) == set(fixed.state_dict())
    x = torch.randn(2, 4)
    compiled, counter = _compiled(fixed)
    assert torch.equal(compiled(x), original(x)) and counter.frame_count == 1
    assert getattr(fixed.to(torch.float64), attribute).dtype == torch.float64  # moved (and, the unsafe part, converted)
    assert getattr(original.to(torch.float64), attribute).dtype == torch.float32


def test_a_masked_copy_becomes_a_select_with_equal_results_in_one_graph() -> None:
    before, after = _pair("GM402", "fix_masked_where")
    original, fixed = _original(before.keep_positive), _original(after.keep_positive)
    scores = torch.randn(5, 6)
    scores[0] = -1.0  # a row with no kept score
    scores[1] = 1.0
    fallback = torch.randn(5, 6)
    expected = original(scores, fallback)
    compiled, counter = _compiled(original)
    compiled(scores, fallback)
    graphs_before = counter.frame_count
    got = torch.compile(fixed, backend="eager", fullgraph=True)(scores, fallback)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))
    assert graphs_before > 1  # the read `scores[keep]` is a dynamic-shape break before the fix


def test_an_input_changed_in_place_is_left_to_the_caller() -> None:
    before, after = _pair("GM403", "fix_out_of_place")
    original, fixed = _original(before.normalise), _original(after.normalise)
    x, y = torch.randn(4), torch.randn(4)
    expected = original(x.clone(), y.clone(), 0.5)
    x_kept, y_kept = x.clone(), y.clone()
    got = torch.compile(fixed, backend="eager", fullgraph=True)(x, y, 0.5)
    assert torch.equal(got, expected)
    assert torch.equal(x, x_kept) and torch.equal(y, y_kept)  # the caller's tensors are unchanged now


def test_a_view_of_an_input_changed_in_place_is_left_to_the_caller() -> None:
    before, after = _pair("GM403", "fix_view_rebinding")
    original, fixed = _original(before.span_loss), _original(after.span_loss)
    logits, start, limit = torch.randn(3, 5), torch.tensor([[-2], [7], [3]]), torch.tensor([[2.0, -1.0]])
    changed = start.clone()
    expected = original(logits, changed, limit.clone())
    assert not torch.equal(changed, start)  # the original writes through the squeezed view into the caller's tensor
    kept = start.clone()
    got = torch.compile(fixed, backend="eager", fullgraph=True)(logits, start, limit)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))
    assert torch.equal(start, kept)


def test_a_cond_becomes_a_select_with_equal_results_on_both_branches() -> None:
    before, after = _pair("GM404", "fix_cond_select")
    original, fixed = _original(before.layer), _original(after.layer)
    compiled = torch.compile(fixed, backend="eager", fullgraph=True)
    w = torch.randn(4, 4)
    for sign in (1.0, -1.0):  # both branches taken
        x = sign * torch.ones(3, 4)
        w_abs = w.abs()
        assert torch.equal(compiled(x, w_abs), original(x, w_abs))


def test_cuda_graph_rules_follow_the_setting() -> None:
    source = (FIXTURES / "GM401" / "neg_without_cuda_graphs.py").read_text()
    path = FIXTURES / "GM401" / "neg_without_cuda_graphs.py"
    assert not [d for d in check_source(source, path) if d.code.startswith("GM4")]
    (found,) = [d for d in check_source(source, path, Settings(cuda_graphs="always")) if d.code.startswith("GM4")]
    assert found.code == "GM401" and found.data.cuda_graphs == 'the `cuda-graphs = "always"` setting'
    with pytest.raises(SettingsError, match="`cuda-graphs` must be one of 'auto', 'always', 'never'"):
        Settings().merged({"cuda-graphs": "sometimes"})


def test_a_finding_names_the_compile_site_that_asks_for_cuda_graphs() -> None:
    path = FIXTURES / "GM402" / "masked_write_of_many_values.py"
    (found,) = [d for d in check_source(path.read_text(), path) if d.code == "GM402"]
    assert found.data.cuda_graphs == '`clip_scores` is compiled with options={"triton.cudagraphs": True} at line 4'
    assert found.data.no_fix == "only `x[mask] = y[mask]` (the same mask on both sides) can become a `torch.where`"
    assert found.message == RULES_BY_CODE["GM402"].message  # the one sentence: the rest is data
    assert found.data.cuda_graphs.startswith("`clip_scores` is compiled with")


def test_the_loop_gate_keeps_torch_where_under_cuda_graphs() -> None:
    path = CORPUS / "pos_layerdrop_checkpointing.py"
    (title,) = [
        d.fix.title
        for d in check_source(path.read_text(), path, Settings(layer_skip="cond", cuda_graphs="always"))
        if d.fix is not None and d.code.startswith("GM1")
    ]
    assert "(`torch.where`), not `torch.cond`: CUDA graphs are recorded here" in title


def test_a_compile_site_in_another_file_turns_the_rules_on(tmp_path: Path, capsys) -> None:
    (tmp_path / "model.py").write_text(
        "import torch\n\n\nclass Scaled(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = torch.tensor(0.5)\n\n    def forward(self, x):\n        return x * self.scale\n"
    )
    (tmp_path / "train.py").write_text(
        'import torch\n\nfrom model import Scaled\n\nmodel = torch.compile(Scaled(), mode="reduce-overhead")\n'
    )
    code, out, _ = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))
    (found,) = json.loads(out)
    assert (found["code"], found["line"]) == ("GM401", 10)
    assert found["cuda_graphs"] == '`Scaled.forward` is compiled with mode="reduce-overhead" at line 5 of train.py'
    (tmp_path / "train.py").write_text("import torch\n\nfrom model import Scaled\n\nmodel = torch.compile(Scaled())\n")
    code, out, _ = run(capsys, "check", "--output-format", "json", "--no-cache", str(tmp_path))
    assert json.loads(out) == []
