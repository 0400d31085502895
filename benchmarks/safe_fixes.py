"""Every fix graphmend labels safe in transformers 4.49.0 `models/`, run where users run (issue 42).

    python benchmarks/safe_fixes.py [--families a,b] [--jobs N] [--json OUT] [--keep DIR [--reuse]] [--no-inductor]

The population is every GM101/GM102 diagnostic whose fix is safe in the installed `models/` tree
(what `graphmend check` reports there). For each family that holds one and has a tiny model here
(paper_table2's builders, and a few more), a fresh process per variant (installed = before; a copy
with `graphmend fix` applied, safe fixes only = after) runs the model in half precision, where the
fp16 clamp guards that make up most of these fixes break (detectors, whose clamps run under
`self.training` in any dtype, in float32), each way a user runs it:

- **eval**: compiled (a counting backend), no_grad: every floating point output, the graphs and the
  recompiles;
- **train**: every dropout 0, `model.train()`, compiled (a counting backend): the graphs, every
  parameter's gradient after backward of the sum of every output, then
  3 SGD (momentum, weight decay) and 3 AdamW (weight decay) steps: the parameters after them;
- **inductor**: compiled with inductor (`fallback_random`), no_grad, with `emulate_precision_casts`
  (each intermediate value rounded to its dtype, as eager does): the outputs on the model as built,
  equal to 2 ulps. At inductor's default precision (a graph's intermediate values kept in float32)
  and in the overflowing settings the outputs are reported, not judged: the rewrite's one graph
  rounds where the original's pieces did not, and in half precision a value past 65504 at the
  former break is inf before and finite after;
- **serving**: one compiled pass under `inference_mode`, then `load_state_dict` of its own state;
- **where the code runs** (issue 50; the layers a fix is in already run inlined, as submodules of the
  compiled model): with a forward hook on every submodule (the outputs and how often each fired),
  training with gradient checkpointing where the model supports it (the gradients), exported
  (`torch.export`, non-strict: its outputs, or its error), and at twice the batch (the graphs and
  recompiles).

Each way runs three times (`SETTINGS`): on the model as built (no hidden state overflows: the
guarded branch is not taken), and with the projections that add attention's, or the feed-forward
block's, output to the residual stream made to overflow (weights 0 and bias inf; without a bias,
weights at 0.9 of their dtype's largest value): hidden states hold inf there, the branch is taken.
Eager runs of the original, in eval and in training, record the lines of the model file they
execute, so each fix's report says whether its branch ran in each setting. Safe means every comparison agrees (NaN equal to NaN in the same place).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import paper_table2
import torch
import torch._dynamo
import torch._dynamo.testing
import torch._inductor.config
import transformers
from harness import (
    Gradients,
    exit_unless_imported_from,
    fixed_copy,
    gradient_difference,
    graphmend_check,
    identical,
    max_difference,
    optimiser_steps,
    parameter_gradients,
    parameters_difference,
    run_worker,
    same,
    trace_lines,
    without_layerdrop,
    worker_env,
)
from torch import nn

RECOMPILES_LOGGER = "torch._dynamo.guards.__recompiles"
# The weight settings each way runs with: as built, and with the Linear layers whose output joins the
# residual stream after attention, or after the feed-forward block, set near their dtype's largest
# value, so the hidden states overflow there (a clamp testing only for inf is taken only where no
# NaN came first: each site needs its own setting).
SETTINGS: dict[str, frozenset[str]] = {
    "": frozenset(),
    "-attention": frozenset({"out_proj", "o", "o_proj", "output"}),
    "-feed-forward": frozenset({"fc2", "wo", "down_proj"}),
}


# Families whose clamp runs under `self.training` in any dtype: they run in float32 (their models are
# not all usable in half precision on the CPU); the others' clamps break in half precision only.
FLOAT32 = frozenset(
    "detr conditional_detr table_transformer deformable_detr deprecated/deta rt_detr rt_detr_v2 mask2former "
    "grounding_dino oneformer omdet_turbo".split()
)
DECODER = dict(decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=32)


def _bigbird_pegasus() -> paper_table2.Built:
    return paper_table2._bart_like("BigBirdPegasusForConditionalGeneration", attention_type="original_full")


def _time_series(model: str, **overrides: Any) -> paper_table2.Built:
    """A forecasting transformer on a batch of two random series with one time feature."""
    model_class = paper_table2._model_class(model)
    config = model_class.config_class(
        prediction_length=4,
        context_length=8,
        lags_sequence=[1, 2],
        num_time_features=1,
        d_model=16,
        encoder_layers=2,
        encoder_attention_heads=2,
        encoder_ffn_dim=32,
        **DECODER,
        **overrides,
    )
    past = 8 + 2  # the context and the largest lag
    inputs = dict(
        past_values=torch.randn(2, past),
        past_time_features=torch.randn(2, past, 1),
        past_observed_mask=torch.ones(2, past),
        future_values=torch.randn(2, 4),
        future_time_features=torch.randn(2, 4, 1),
    )
    return model_class(config), [inputs]


def _detection(model: str, stages: int = 1, text: bool = False, **overrides: Any) -> paper_table2.Built:
    """A DETR-style detector on a tiny ResNet backbone built from its config (nothing downloaded):
    `stages` feature maps (2 for the deformable ones, with `DEFORMABLE`), a tiny BERT with `text`."""
    model_class = paper_table2._model_class(model)
    d_model = overrides.pop("d_model", 16)
    settings: dict[str, Any] = dict(
        backbone_config=_resnet(2),
        use_pretrained_backbone=False,
        backbone=None,
        d_model=d_model,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=2 * d_model,
        num_queries=4,
        **{**DECODER, "decoder_ffn_dim": 2 * d_model},
    )
    settings["backbone_config"].out_features = settings["backbone_config"].out_features[-stages:]
    inputs: dict[str, torch.Tensor] = dict(pixel_values=torch.randn(2, 3, 32, 32))
    if text:
        settings["text_config"] = dict(
            model_type="bert",
            vocab_size=32,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
        )
        inputs["input_ids"] = torch.randint(3, 32, (2, 6))
    else:
        inputs["pixel_mask"] = torch.ones(2, 32, 32, dtype=torch.long)
    return model_class(model_class.config_class(**settings, **overrides)), [inputs]


# The deformable detectors' settings: d_model a multiple of their GroupNorm's 32 groups, two levels.
DEFORMABLE = dict(d_model=32, stages=2, num_feature_levels=2, encoder_n_points=2, decoder_n_points=2)


def _rt_detr(model: str) -> paper_table2.Built:
    """RT-DETR on a tiny ResNet backbone with three feature levels."""
    model_class = paper_table2._model_class(model)
    backbone = transformers.RTDetrResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 16],
        depths=[1, 1, 1],
        out_features=["stage1", "stage2", "stage3"],
        out_indices=[1, 2, 3],
    )
    config = model_class.config_class(
        backbone_config=backbone,
        use_pretrained_backbone=False,
        backbone=None,
        d_model=16,
        encoder_hidden_dim=16,
        encoder_in_channels=[8, 16, 16],
        encoder_layers=1,
        encoder_ffn_dim=32,
        encoder_attention_heads=2,
        decoder_in_channels=[16, 16, 16],
        num_queries=4,
        num_feature_levels=3,
        decoder_n_points=2,
        num_denoising=0,
        hidden_expansion=0.5,
        anchor_image_size=None,
        **DECODER,
    )
    return model_class(config), [dict(pixel_values=torch.randn(2, 3, 64, 64))]


def _resnet(stages: int) -> transformers.ResNetConfig:
    return transformers.ResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 16, 16][:stages],
        depths=[1] * stages,
        out_features=[f"stage{index + 1}" for index in range(stages)],
    )


def _mask2former() -> paper_table2.Built:
    config = transformers.Mask2FormerConfig(
        backbone_config=_resnet(4),
        use_pretrained_backbone=False,
        backbone=None,
        feature_size=32,
        mask_feature_size=32,
        hidden_dim=32,
        encoder_feedforward_dim=64,
        dim_feedforward=64,
        encoder_layers=1,
        decoder_layers=2,
        num_attention_heads=2,
        num_queries=4,
        common_stride=4,
    )
    return transformers.Mask2FormerModel(config), [dict(pixel_values=torch.randn(2, 3, 64, 64))]


def _oneformer() -> paper_table2.Built:
    """OneFormer with its text encoder (`is_training`: its clamp runs only then)."""
    config = transformers.OneFormerConfig(
        backbone_config=_resnet(4),
        use_pretrained_backbone=False,
        backbone=None,
        hidden_dim=64,
        mask_dim=64,
        conv_dim=64,
        encoder_feedforward_dim=64,
        dim_feedforward=64,
        encoder_layers=1,
        decoder_layers=2,
        num_attention_heads=2,
        num_queries=4,
        text_encoder_width=64,
        text_encoder_context_length=8,
        text_encoder_num_layers=1,
        text_encoder_vocab_size=32,
        text_encoder_proj_layers=1,
        text_encoder_n_ctx=2,
        common_stride=4,
        task_seq_len=8,
        max_seq_len=8,
        is_training=True,
    )
    inputs = dict(
        pixel_values=torch.randn(2, 3, 64, 64),
        task_inputs=torch.randint(0, 32, (2, 8)),
        text_inputs=torch.randint(0, 32, (2, 2, 8)),
    )
    return transformers.OneFormerModel(config), [inputs]


def _omdet_turbo() -> paper_table2.Built:
    """OmDet-Turbo on a tiny Swin backbone (channels first, so no layer norm after it) and a tiny CLIP text
    model. The class embedding differs from the decoder's width: its decoder reads `task_project`, which it
    builds only then. Its language caches are off: a cached embedding keeps the autograd graph of the
    step that computed it, so the next step's backward would run through a freed graph."""
    swin = transformers.SwinConfig(
        image_size=64, embed_dim=8, depths=[1] * 4, num_heads=[1] * 4, window_size=2, out_indices=[2, 3, 4]
    )
    text = dict(
        model_type="clip_text_model",
        vocab_size=32,
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=16,
    )
    config = transformers.OmDetTurboConfig(
        text_config=text,
        backbone_config=swin,
        use_timm_backbone=False,
        backbone=None,
        image_size=64,
        apply_layernorm_after_vision_backbone=False,
        text_projection_in_dim=32,
        text_projection_out_dim=32,
        task_encoder_hidden_dim=32,
        class_embed_dim=32,
        num_queries=4,
        vision_features_channels=[16, 16, 16],
        encoder_hidden_dim=16,
        encoder_in_channels=[16, 32, 64],
        encoder_attention_heads=2,
        encoder_dim_feedforward=32,
        decoder_hidden_dim=16,
        decoder_num_heads=2,
        decoder_num_layers=1,
        decoder_dim_feedforward=32,
        decoder_num_points=2,
    )
    inputs = dict(
        pixel_values=torch.randn(2, 3, 64, 64),
        classes_input_ids=torch.randint(3, 32, (4, 6)),
        classes_attention_mask=torch.ones(4, 6, dtype=torch.long),
        tasks_input_ids=torch.randint(3, 32, (2, 6)),
        tasks_attention_mask=torch.ones(2, 6, dtype=torch.long),
        classes_structure=torch.tensor([2, 2]),  # two classes per image
    )
    model = transformers.OmDetTurboForObjectDetection(config)
    for cache in (model.language_cache_class, model.language_cache_prompt):
        cache.has = lambda key: False
    return model, [inputs]


def _pix2struct() -> paper_table2.Built:
    """Pix2Struct with its vision encoder, so the decoder's cross-attention runs too."""
    config = transformers.Pix2StructConfig(
        text_config=dict(vocab_size=32, hidden_size=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2),
        vision_config=dict(
            hidden_size=16, patch_embed_hidden_size=12, d_ff=32, d_kv=8, num_hidden_layers=1, num_attention_heads=2
        ),
    )
    patches = torch.randn(2, 6, 14)
    patches[:, :, 0] = torch.arange(1, 7).float()  # row and column of each patch (1-based)
    patches[:, :, 1] = 1.0
    inputs = dict(
        flattened_patches=patches, attention_mask=torch.ones(2, 6), decoder_input_ids=torch.randint(3, 32, (2, 4))
    )
    return transformers.Pix2StructForConditionalGeneration(config), [inputs]


def _zamba(family: str) -> paper_table2.Built:
    """Zamba (one hybrid layer after two Mamba ones) or Zamba2 (a Mamba and a hybrid layer), with
    the pure PyTorch Mamba path; a batch whose second row is left padded (the masked Mamba inputs),
    then one without padding."""
    if family == "zamba":
        config = transformers.ZambaConfig(
            vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=3, num_attention_heads=2,
            num_key_value_heads=2, n_mamba_heads=2, use_mamba_kernels=False, mamba_d_state=4, max_position_embeddings=64,
        )  # fmt: skip
        model: nn.Module = transformers.ZambaForCausalLM(config)
    else:
        config = transformers.Zamba2Config(
            vocab_size=32, hidden_size=16, num_hidden_layers=2, layers_block_type=["mamba", "hybrid"], mamba_d_state=4,
            n_mamba_heads=2, num_attention_heads=2, chunk_size=4, adapter_rank=4, max_position_embeddings=64,
        )  # fmt: skip
        model = transformers.Zamba2ForCausalLM(config)
    ids = torch.randint(3, 32, (2, 6))
    padded = torch.ones(2, 6, dtype=torch.long)
    padded[1, :2] = 0
    return model, [
        dict(input_ids=ids, attention_mask=padded),
        dict(input_ids=ids, attention_mask=torch.ones_like(padded)),
    ]


def _builders() -> dict[str, Any]:
    """Per family, how to build its tiny model: paper_table2's first eval case, and more here."""
    found: dict[str, Any] = {}
    for case in paper_table2.CASES.values():
        if not case.half and not case.train:
            found.setdefault(case.family, case.build)
    return found | {
        "bigbird_pegasus": _bigbird_pegasus,
        "time_series_transformer": partial(_time_series, "TimeSeriesTransformerModel"),
        "informer": partial(_time_series, "InformerModel"),
        "detr": partial(_detection, "DetrModel", use_timm_backbone=False),
        "conditional_detr": partial(_detection, "ConditionalDetrModel", use_timm_backbone=False),
        "table_transformer": partial(_detection, "TableTransformerModel", use_timm_backbone=False),
        "deformable_detr": partial(_detection, "DeformableDetrModel", use_timm_backbone=False, **DEFORMABLE),
        "rt_detr": partial(_rt_detr, "RTDetrModel"),
        "rt_detr_v2": partial(_rt_detr, "RTDetrV2Model"),
        "pix2struct": _pix2struct,
        "deprecated/deta": partial(_detection, "DetaModel", two_stage=False, with_box_refine=False, **DEFORMABLE),
        "mask2former": _mask2former,
        "grounding_dino": partial(_detection, "GroundingDinoModel", text=True, max_text_len=8, **DEFORMABLE),
        "oneformer": _oneformer,
        "omdet_turbo": _omdet_turbo,
        "zamba": partial(_zamba, "zamba"),
        "zamba2": partial(_zamba, "zamba2"),
    }


# Families with a safe fix and no tiny model here, and why.
NOT_RUN = {
    "autoformer": "its branch cannot be taken: it tests for float16, but the model does not run in half precision "
    "(its autocorrelation sums in float32, `zeros_like(value_states).float()`, which `out_proj` then refuses), and "
    "under autocast the final layer norm before the clamp returns float32",
}


BUILDERS = _builders()


def population(models: Path) -> list[dict[str, Any]]:
    """GM101/GM102 diagnostics with a safe fix, over the installed models tree."""
    return [
        d
        for d in graphmend_check(models)
        if d["code"] in ("GM101", "GM102") and d.get("fix") and d["fix"]["applicability"] == "safe"
    ]


def family_of(path: str) -> str:
    """The folder under models/ (`deprecated/deta` for the deprecated ones)."""
    return str(Path(path).resolve().parent).split("/transformers/models/")[-1]


# ---------------------------------------------------------------- the worker (one family, one variant)


def _built(family: str, train: bool) -> tuple[nn.Module, list[dict[str, Any]]]:
    """The family's tiny model in half precision (FLOAT32: as built) with seeded weights, its inputs likewise; for
    training every dropout probability 0 and no layerdrop (the clamps are what is compared)."""
    torch.manual_seed(0)
    model, calls = paper_table2._for_training(BUILDERS[family]) if train else BUILDERS[family]()
    if train:  # paper_table2's training dropouts (sub-configs included), then no layerdrop either
        without_layerdrop(model)
        if "use_cache" in inspect.signature(model.forward).parameters:
            calls = [dict(inputs, use_cache=False) for inputs in calls]
    model.train(train)
    if family in FLOAT32:
        return model, calls
    model.half()
    calls = [
        {k: v.half() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inputs.items()}
        for inputs in calls
    ]
    return model, calls


def _set(model: nn.Module, built: dict[str, torch.Tensor], setting: str) -> None:
    """The model's weights as built, then the `setting`'s projections made to overflow (in place:
    compiled code keeps them): weights 0 and bias inf, so the output is inf whatever the input's
    signs; without a bias, weights at 0.9 of their dtype's largest value."""
    model.load_state_dict(built)
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] in SETTINGS[setting]:
                if module.bias is not None:
                    module.weight.zero_()
                    module.bias.fill_(float("inf"))
                else:
                    module.weight.fill_(0.9 * torch.finfo(module.weight.dtype).max)


def _outputs(model: nn.Module, calls: list[dict[str, Any]]) -> list[torch.Tensor]:
    """Every floating point tensor every call returns (a detector's first output, its reference
    points, does not depend on the encoder its clamp is in: all of them are compared)."""
    return [tensor for inputs in calls for tensor in _floating(model(**inputs))]


def _floating(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, dict):  # a ModelOutput
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [tensor for part in value for tensor in _floating(part)]
    return []


def _losses(model: nn.Module, calls: list[dict[str, Any]]) -> list[torch.Tensor]:
    """Per call, the sum of every floating point tensor it returns, for backward."""
    return [torch.stack([t.float().sum() for t in _floating(model(**inputs))]).sum() for inputs in calls]


@contextlib.contextmanager
def _recompiles() -> Any:
    """The records of Dynamo's recompiles log while the block runs."""
    import logging

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    torch._logging.set_logs(recompiles=True)
    logger = logging.getLogger(RECOMPILES_LOGGER)
    handler = Keep()
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs(recompiles=False)


def _traced(model: nn.Module, calls: list[dict[str, Any]]) -> dict[str, list[int]]:
    """The lines of models/ an eager run of the model executes."""
    executed: dict[str, set[int]] = {}
    sys.settrace(partial(trace_lines, _models_file, executed))
    try:
        _outputs(model, calls)
    finally:
        sys.settrace(None)
    return {path: sorted(lines) for path, lines in executed.items()}


def _models_file(path: str) -> str | None:
    return path.split("/transformers/")[-1] if "/transformers/models/" in path else None


def worker(family: str, out: Path, expected_package: Path, inductor: bool) -> None:
    """Run one family's model every way, in every weight setting; write the record and tensors."""
    exit_unless_imported_from(expected_package)
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    record: dict[str, Any] = {"executed": [], "graphs": None, "recompiles": None, "serving": []}
    tensors: dict[str, Any] = {}

    model, calls = _built(family, train=False)
    built = {key: value.clone() for key, value in model.state_dict().items()}
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(model, backend=counter)
    with torch.no_grad(), _recompiles() as recompiles:
        for setting in SETTINGS:
            _set(model, built, setting)
            record["executed"].append(_traced(model, calls))
            tensors[f"eval{setting}"] = [t.detach() for t in _outputs(compiled, calls)]
    record["graphs"], record["recompiles"] = counter.frame_count, len(recompiles)

    torch._dynamo.reset()
    model, calls = _built(family, train=True)
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(model, backend=counter)
    for index, setting in enumerate(SETTINGS):
        _set(model, built, setting)
        for path, lines in _traced(model, calls).items():  # clamps under `self.training` run here
            record["executed"][index][path] = sorted({*record["executed"][index].get(path, []), *lines})
        tensors[f"train{setting}"] = [parameter_gradients(model, loss) for loss in _losses(compiled, calls)]
        tensors[f"steps{setting}"] = optimiser_steps(model, partial(_losses, compiled, calls))
    record["train_graphs"] = counter.frame_count

    if inductor:
        torch._dynamo.reset()
        model, calls = _built(family, train=False)
        for exact in (False, True):
            torch._dynamo.reset()
            compiled = torch.compile(model, backend="inductor")
            patch = dict(fallback_random=True, emulate_precision_casts=exact)
            with torch.no_grad(), torch._inductor.config.patch(**patch):
                for setting in SETTINGS:
                    _set(model, built, setting)
                    key = f"{'exact-' * exact}inductor{setting}"
                    tensors[key] = [t.detach() for t in _outputs(compiled, calls)]

    _where_the_code_runs(family, built, record, tensors)
    _where_models_train(family, built, record, tensors, inductor)

    for setting in SETTINGS:
        torch._dynamo.reset()
        model, calls = _built(family, train=False)
        _set(model, built, setting)
        try:
            with torch.inference_mode():
                _outputs(torch.compile(model, backend="eager"), calls)
            model.load_state_dict(model.state_dict())
        except Exception as error:  # noqa: BLE001 - an error is what serving code would see
            record["serving"].append(f"{type(error).__name__}: {error}"[:200])
        else:
            record["serving"].append(None)
    torch.save(tensors, f"{out}.pt")
    out.write_text(json.dumps(record))


def _count(fired: dict[str, int], key: str, *_: object) -> None:
    fired[key] = fired.get(key, 0) + 1


def _where_the_code_runs(family: str, built: dict[str, Any], record: dict[str, Any], tensors: dict[str, Any]) -> None:
    """The contexts of issue 50's matrix that apply to a whole model: hooks on every submodule,
    gradient checkpointing, non-strict export, and a doubled batch."""
    record["hooks"] = []
    for setting in SETTINGS:
        torch._dynamo.reset()
        model, calls = _built(family, train=False)
        _set(model, built, setting)
        fired: dict[str, int] = {}
        for name, module in model.named_modules():
            module.register_forward_hook(partial(_count, fired, name or "<root>"))
        with torch.no_grad():
            tensors[f"hooks{setting}"] = [t.detach() for t in _outputs(torch.compile(model, backend="eager"), calls)]
        record["hooks"].append(dict(sorted(fired.items())))
    torch._dynamo.reset()
    model, calls = _built(family, train=True)
    if getattr(model, "supports_gradient_checkpointing", False):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        compiled = torch.compile(model, backend="eager")
        for setting in SETTINGS:
            _set(model, built, setting)
            tensors[f"checkpointing{setting}"] = [parameter_gradients(model, loss) for loss in _losses(compiled, calls)]
    torch._dynamo.reset()
    model, calls = _built(family, train=False)
    try:
        with torch.no_grad():
            exported = torch.export.export(model, (), kwargs=calls[0], strict=False).module()
            tensors["export"] = [t.detach() for t in _floating(exported(**calls[0]))]
        record["export"] = None
    except Exception as error:  # noqa: BLE001 - what a user exporting the model would see
        record["export"] = f"{type(error).__name__}"
    torch._dynamo.reset()
    model, calls = _built(family, train=False)
    doubled = [
        {k: torch.cat([v, v]) if torch.is_tensor(v) and v.dim() > 0 else v for k, v in inputs.items()}
        for inputs in calls
    ]
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(model, backend=counter)
    with torch.no_grad(), _recompiles() as recompiles:
        try:
            _outputs(compiled, [*calls, *doubled])
        except Exception as error:  # noqa: BLE001 - inputs a model cannot batch that way
            record["doubled"] = f"{type(error).__name__}"
        else:
            record["doubled"] = [counter.frame_count, len(recompiles)]


def _where_models_train(
    family: str, built: dict[str, Any], record: dict[str, Any], tensors: dict[str, Any], inductor: bool
) -> None:
    """The contexts issue 67 added that apply to a whole model: warnings as errors, the meta device
    and a FakeTensorMode (shapes and dtypes, or the error), `torch.func.grad` over the parameters
    (the model's own code, uncompiled), DistributedDataParallel compiled on 2 gloo ranks (rank 0's
    gradients), and with inductor inductor in training (gradients, with emulated casts) and a second
    process on the inductor caches a first one filled (its cache hits and bypasses, its outputs).
    `vmap` and `fx.symbolic_trace` do not apply: the models batch their own inputs, and transformers
    traces with its own tracer."""
    record["werror"] = []
    for setting in SETTINGS:
        torch._dynamo.reset()
        model, calls = _built(family, train=False)
        _set(model, built, setting)
        compiled = torch.compile(model, backend="eager")
        with torch.no_grad():
            _outputs(compiled, calls)  # compiled with warnings shown: Dynamo's own probes may warn while tracing
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    tensors[f"werror{setting}"] = [t.detach() for t in _outputs(compiled, calls)]
                    record["werror"].append(None)
                except Warning as warning:
                    record["werror"].append(f"{type(warning).__name__}: {warning}"[:200])
    for device in ("meta", "fake"):
        torch._dynamo.reset()
        record[device] = _without_values(family, device)
    record["func_grad"] = []
    for setting in SETTINGS:
        model, calls = _built(family, train=True)
        _set(model, built, setting)
        try:
            tensors[f"funcgrad{setting}"] = _func_gradients(model, calls)
            record["func_grad"].append(None)
        except Exception as error:  # noqa: BLE001 - what a user of torch.func would see
            record["func_grad"].append(f"{type(error).__name__}: {error}"[:200])
    tensors["ddp"] = _ddp(family, built)
    if inductor:
        torch._dynamo.reset()
        model, calls = _built(family, train=True)
        compiled = torch.compile(model, backend="inductor")
        with torch._inductor.config.patch(fallback_random=True, emulate_precision_casts=True):
            for setting in SETTINGS:
                _set(model, built, setting)
                tensors[f"inductor-train{setting}"] = [
                    parameter_gradients(model, loss) for loss in _losses(compiled, calls)
                ]
        record["warm_cache"] = _warm_cache(family)


def _without_values(family: str, device: str) -> list[list[object]] | str:
    """The model built on the meta device, or under a FakeTensorMode, compiled and run: each output's
    shape and dtype, or the error."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    inside = torch.device("meta") if device == "meta" else FakeTensorMode()
    try:
        with inside, torch.no_grad():
            model, calls = _built(family, train=False)
            outputs = _outputs(torch.compile(model, backend="eager"), calls)
            return [[list(t.shape), str(t.dtype)] for t in outputs]
    except Exception as error:  # noqa: BLE001 - an error is what a user estimating memory would see
        return f"{type(error).__name__}: {error}"[:200]


def _func_gradients(model: nn.Module, calls: list[dict[str, Any]]) -> list[dict[str, torch.Tensor]]:
    """Per call, `torch.func.grad` of the sum of its floating outputs over every parameter."""
    parameters = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params: dict[str, torch.Tensor], inputs: dict[str, Any]) -> torch.Tensor:
        output = torch.func.functional_call(model, params, args=(), kwargs=inputs)
        return torch.stack([t.float().sum() for t in _floating(output)]).sum()

    return [
        {name: g.detach().clone() for name, g in torch.func.grad(loss)(parameters, inputs).items()} for inputs in calls
    ]


_BUCKET_MB = 1e-5  # about 10 bytes: a bucket a parameter, a graph cut at each


def _ddp_rank(rank: int, family: str, built: dict[str, Any], rendezvous: str, out: str) -> None:
    """One rank of DistributedDataParallel compiled with aot_eager, buckets of about 10 bytes (the
    DDPOptimizer cuts a graph at each parameter): rank 0 saves the gradients of each setting."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    dist.init_process_group("gloo", init_method=rendezvous, rank=rank, world_size=2)
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(_BUCKET_MB * 1024 * 1024)  # the DDPOptimizer wants it no larger
    try:
        found = []
        for setting in SETTINGS:
            torch._dynamo.reset()
            model, calls = _built(family, train=True)
            _set(model, built, setting)
            wrapped = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=_BUCKET_MB, find_unused_parameters=True)
            compiled = torch.compile(wrapped, backend="aot_eager")
            found.append([parameter_gradients(model, loss) for loss in _losses(compiled, calls)])
        if rank == 0:
            torch.save(found, out)
    finally:
        dist.destroy_process_group()


def _ddp(family: str, built: dict[str, Any]) -> list[object] | str:
    """Rank 0's gradients under compiled DDP on 2 gloo ranks, per setting (or the error)."""
    import torch.multiprocessing

    with tempfile.TemporaryDirectory() as folder:
        out = f"{folder}/ddp.pt"
        rendezvous = f"file://{folder}/rendezvous"
        try:
            torch.multiprocessing.spawn(_ddp_rank, args=(family, built, rendezvous, out), nprocs=2, join=True)
            return torch.load(out)
        except Exception as error:  # noqa: BLE001 - what a user training with DDP would see
            return f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:200]}"


def _warm_cache(family: str) -> list[object]:
    """Two fresh processes compile the model (as built, eval, no_grad) with inductor against one
    empty cache folder: the second's FX graph cache hits, misses and bypasses, and its outputs'
    shapes (the values are in `inductor`)."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": folder, "TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}
        seen: list[object] = []
        for _ in range(2):
            run = subprocess.run(
                [sys.executable, __file__, "--cache-probe", family],
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            seen.append(json.loads(run.stdout.strip().splitlines()[-1]) if run.returncode == 0 else run.stderr[-200:])
        return seen[1:]


def _cache_probe(family: str) -> None:
    """One process of `_warm_cache`: prints the FX graph cache counters as JSON."""
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    model, calls = _built(family, train=False)
    with torch.no_grad(), torch._inductor.config.patch(fallback_random=True):
        outputs = _outputs(torch.compile(model, backend="inductor"), calls)
    counters = torch._dynamo.utils.counters["inductor"]
    keys = ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass")
    print(json.dumps({"cache": {key: counters[key] for key in keys}, "shapes": [list(t.shape) for t in outputs]}))


# ---------------------------------------------------------------- the driver


def _rounding(first: torch.Tensor, second: torch.Tensor) -> bool:
    """Equal to 2 ulps of the dtype's precision at 1 (relative and absolute), NaN where NaN: inductor
    fuses the rewrite's one graph differently from the original's pieces."""
    tolerance = 2 * torch.finfo(first.dtype).eps
    return first.shape == second.shape and torch.allclose(
        first.double(), second.double(), rtol=tolerance, atol=tolerance, equal_nan=True
    )


def _described(before: list[torch.Tensor], after: list[torch.Tensor]) -> str:
    """How inductor's outputs before and after differ, in words."""
    if same(before, after, _rounding):
        return "equal to rounding"
    past = any(not torch.equal(b.isfinite(), a.isfinite()) for b, a in zip(before, after))
    largest = max(map(max_difference, before, after))
    return f"max |Δ| {largest:.3g}" + (", inf/NaN in other places" if past else "")


def _file(family: str) -> str:
    return family.replace("/", "-")


def _differences(work: Path, family: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the safe fixes change in one family, in words (empty: nothing)."""
    found = []
    if after["train_graphs"] > before["train_graphs"]:
        found.append(f"graphs in training {before['train_graphs']} → {after['train_graphs']}")
    if (after["graphs"], after["recompiles"]) > (before["graphs"], before["recompiles"]):
        found.append(
            f"graphs {before['graphs']} → {after['graphs']}, recompiles {before['recompiles']} → {after['recompiles']}"
        )
    if before["serving"] != after["serving"]:
        found.append(f"serving: {before['serving']} → {after['serving']}")
    if before.get("hooks") != after.get("hooks"):
        found.append(f"hooks: {before.get('hooks')} → {after.get('hooks')}")
    if "export" in before and before["export"] is None and after.get("export") is not None:
        found.append(f"export: no longer exports ({after['export']})")  # one the break stopped may export now
    if isinstance(before.get("doubled"), list) and after.get("doubled") > before["doubled"]:
        found.append(f"twice the batch: graphs, recompiles {before['doubled']} → {after['doubled']}")
    for key in ("werror", "func_grad"):
        if before.get(key) != after.get(key):
            found.append(f"{key}: {before.get(key)} → {after.get(key)}")
    for key in ("meta", "fake"):  # where the break stopped the original (no values to branch on), the fix may run
        if not isinstance(before.get(key), str) and before.get(key) != after.get(key):
            found.append(f"{key}: {before.get(key)} → {after.get(key)}")
    if _colder(before.get("warm_cache"), after.get("warm_cache")):
        found.append(f"warm cache: {before.get('warm_cache')} → {after.get('warm_cache')}")
    old, new = (torch.load(work / f"{_file(family)}.{variant}.json.pt") for variant in ("before", "after"))
    for key in sorted(old):
        if key.startswith(("eval", "hooks", "export", "werror")) and not same(old[key], new.get(key, []), identical):
            found.append(f"{key}: outputs differ")
        elif key == "exact-inductor" and not same(old[key], new[key], _rounding):
            found.append(f"{key}: outputs differ by {max(map(max_difference, old[key], new[key]))}")
        elif key.startswith(("train", "checkpointing")) and gradient_difference(old[key], new[key]) != (None, 0):
            found.append(f"{key}: {gradient_difference(old[key], new[key])}")
        elif key.startswith("steps") and parameters_difference(old[key], new[key]):
            found.append(f"{key}: {parameters_difference(old[key], new[key])}")
        elif key.startswith("funcgrad") and gradient_difference(old[key], new[key]) != (None, 0):
            found.append(f"{key}: {gradient_difference(old[key], new[key])}")
        elif key.startswith("inductor-train") and _gradients_apart(old[key], new[key]):
            found.append(f"{key}: {_gradients_apart(old[key], new[key])}")
        elif key == "ddp":
            found.extend(_ddp_difference(old[key], new[key]))
    return found


def _colder(first: list[Any] | None, second: list[Any] | None) -> bool:
    """The second process compiles more from scratch after than before: a graph it misses or
    bypasses in the warm cache (fewer graphs, fewer hits, is what removing a break does)."""
    if not first or not second or not isinstance(first[0], dict):
        return False
    if not isinstance(second[0], dict):
        return True
    old, new = first[0]["cache"], second[0]["cache"]
    return any(new[key] > old[key] for key in ("fxgraph_cache_miss", "fxgraph_cache_bypass"))


def _gradients_apart(first: list[Gradients], second: list[Gradients]) -> str | None:
    """The first parameter whose inductor-trained gradient differs past rounding (2 ulps), in words."""
    for call, (old, new) in enumerate(zip(first, second)):
        for name, a in old.items():
            b = new.get(name)
            if (a is None) != (b is None) or (a is not None and b is not None and not _rounding(a, b)):
                return f"call {call}: `{name}`'s gradient differs"
    return None if len(first) == len(second) else f"{len(first)} backward passes before, {len(second)} after"


def _ddp_difference(first: object, second: object) -> list[str]:
    """How compiled DDP's gradients differ before and after, per setting, in words."""
    if isinstance(first, str) or isinstance(second, str):
        return (
            []
            if first == second
            else [f"ddp: {first if isinstance(first, str) else 'ran'} → {second if isinstance(second, str) else 'ran'}"]
        )
    assert isinstance(first, list) and isinstance(second, list)
    return [
        f"ddp{setting}: {gradient_difference(old, new)}"
        for setting, old, new in zip(SETTINGS, first, second)
        if gradient_difference(old, new) != (None, 0)
    ]


def _inductor_reported(work: Path, family: str) -> str:
    """Inductor's outputs before and after where they are reported, not judged: at its default
    precision in every setting, with emulated casts in the overflowing ones; in words."""
    old, new = (torch.load(work / f"{_file(family)}.{variant}.json.pt") for variant in ("before", "after"))
    keys = [f"inductor{setting}" for setting in SETTINGS] + [f"exact-inductor{setting}" for setting in SETTINGS][1:]
    return " / ".join(_described(old[key], new[key]) for key in keys if key in old) or "—"


def _body_lines(path: Path, line: int) -> set[int]:
    """The lines of the statements the `if` (or conditional expression) at `line` runs when taken."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and node.lineno == line:
            return {n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.stmt)}
        if isinstance(node, ast.IfExp) and node.lineno == line:
            return {node.body.lineno}
    return set()


def _branch(reached: bool, taken: bool) -> str:
    return "taken" if taken else "not taken" if reached else "not reached"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", help="comma-separated subset of the families with a safe fix")
    parser.add_argument("--json", type=Path, help="write the per-fix rows as JSON to this file")
    parser.add_argument("--keep", type=Path, help="folder for the fixed copy and outputs (default: a temp dir)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per worker process")
    parser.add_argument("--no-inductor", action="store_true", help="leave out the inductor runs (they compile C++)")
    parser.add_argument("--reuse", action="store_true", help="report the records a --keep folder holds; run the rest")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--cache-probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cache_probe:
        _cache_probe(args.cache_probe)
        return 0
    if args.worker:
        family, out, package, inductor = args.worker
        worker(family, Path(out), Path(package), inductor == "1")
        return 0
    started = time.monotonic()
    installed = Path(transformers.__file__).parent
    fixes = population(installed / "models")
    families = sorted({family_of(f["path"]) for f in fixes})
    runnable = [f for f in families if f in BUILDERS and (not args.families or f in args.families.split(","))]
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphmend-safe-fixes-"))
    work.mkdir(parents=True, exist_ok=True)
    copy_root = fixed_copy(work, runnable, unsafe=False)
    variants = {"before": (installed, None), "after": (copy_root / "transformers", copy_root)}
    jobs = [(family, variant) for family in runnable for variant in variants]

    def run(job: tuple[str, str]) -> dict[str, Any]:
        family, variant = job
        record = work / f"{_file(family)}.{variant}.json"
        if args.reuse and record.exists():
            return json.loads(record.read_text())
        package, pythonpath = variants[variant]
        arguments = [
            family,
            str(work / f"{_file(family)}.{variant}.json"),
            str(package),
            "0" if args.no_inductor else "1",
        ]
        return run_worker(
            __file__, arguments, worker_env(pythonpath), work / f"{_file(family)}.{variant}.json", args.timeout
        )

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        records = dict(zip(jobs, pool.map(run, jobs)))
    rows = []
    print(
        f"population: {len(fixes)} safe control-flow fixes in {len(families)} families; runnable here: {len(runnable)}\n"
    )
    print(
        "| site | branch run (as built / attention / feed-forward overflowing) | graphs before → after (eval; train) "
        "| what differs | inductor reported: default precision (as built / attention / feed-forward); "
        "emulated casts (attention / feed-forward) |"
    )
    print("|---|---|---|---|---|")
    for fix in fixes:
        family = family_of(fix["path"])
        site = f"{family}/{Path(fix['path']).name}:{fix['line']}"
        if family not in runnable:
            rows.append({"site": site, "run": False})
            print(f"| {site} | not run: {NOT_RUN.get(family, 'left out (--families)')} | — | — | — |")
            continue
        before, after = records[family, "before"], records[family, "after"]
        if "error" in before or "error" in after:
            rows.append({"site": site, "run": False, "error": before.get("error") or after.get("error")})
            print(f"| {site} | FAILED: {before.get('error') or after.get('error')} | — | — | — |")
            continue
        body = _body_lines(Path(fix["path"]), fix["line"])
        runs = [lines.get(f"models/{family}/{Path(fix['path']).name}", []) for lines in before["executed"]]
        branch = [_branch(fix["line"] in lines, any(line in body for line in lines)) for lines in runs]
        differs = _differences(work, family, before, after)
        overflowing = _inductor_reported(work, family)
        rows.append({"site": site, "run": True, "branch": branch, "differs": differs, "inductor": overflowing})
        print(
            f"| {site} | {' / '.join(branch)} | {before['graphs']} → {after['graphs']}; "
            f"{before['train_graphs']} → {after['train_graphs']} "
            f"| {'; '.join(differs) or 'nothing'} | {overflowing} |"
        )
    ran = [row for row in rows if row["run"]]
    changed = [row for row in ran if row["differs"]]
    both = sum(row["branch"][0] == "not taken" and "taken" in row["branch"] for row in ran)
    print(
        f"\n{len(ran)} of {len(fixes)} safe fixes run; branch not taken as built and taken overflowing: {both}; "
        f"behaviour changes: {len(changed)}; {time.monotonic() - started:.0f} s (--jobs {args.jobs})"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
