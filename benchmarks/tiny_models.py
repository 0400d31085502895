"""Tiny random models of any transformers release, from its own default configs (issue 18).

`build(model_type, train)` shrinks the architecture's default config (widths, depths, heads,
vocabularies, image and audio sizes, experts; nested `text_config`/`vision_config`/... alike),
builds the base model with `AutoModel.from_config` and makes inputs from the model's
`main_input_name`: token ids with a left-padded attention mask, pixels, audio features or samples.
No weights are downloaded. Architectures that need inputs this cannot make fail with a reason;
`agreement_5x.py` lists them.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoModel

Inputs = dict[str, Any]

# Config attributes set to small values wherever they appear (any nesting level).
_SMALL = {
    "hidden_size": 32,
    "d_model": 32,
    "n_embd": 32,
    "embed_dim": 32,
    "dim": 32,
    "model_dim": 32,
    "d_embed": 32,
    "num_hidden_layers": 2,
    "num_layers": 2,
    "n_layer": 2,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "num_decoder_layers": 2,
    "n_layers": 2,
    "num_attention_heads": 4,
    "n_head": 4,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "num_heads": 4,
    "n_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "d_kv": 8,
    "kv_channels": 8,
    "intermediate_size": 64,
    "ffn_dim": 64,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "d_ff": 64,
    "n_inner": 64,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "num_experts": 4,
    "num_local_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "vocab_size": 128,
    "image_size": 32,
    "patch_size": 8,
    "max_position_embeddings": 128,
    "num_mel_bins": 16,
    "max_source_positions": 64,
    "max_target_positions": 64,
    "projection_dim": 32,
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "first_k_dense_replace": 1,
    "sliding_window": 16,
}
_SUB_CONFIGS = ("text_config", "vision_config", "audio_config", "encoder", "decoder", "speech_config")
SEQ = 8
AUDIO_SAMPLES = 16000


def tiny_config(model_type: str) -> transformers.PretrainedConfig:
    config = AutoConfig.for_model(model_type)
    _shrink(config)
    for name in _SUB_CONFIGS:
        sub = getattr(config, name, None)
        if isinstance(sub, transformers.PretrainedConfig):
            _shrink(sub)
    config._attn_implementation = "eager"  # sdpa/flash differ by machine; eager is the reference code
    return config


def _shrink(config: transformers.PretrainedConfig) -> None:
    for key, value in _SMALL.items():
        current = getattr(config, key, None)
        if isinstance(current, int) and not isinstance(current, bool) and current > value:
            setattr(config, key, value)
    vocab = getattr(config, "vocab_size", None)
    if isinstance(vocab, int):  # special tokens inside the smaller vocabulary
        for number, key in enumerate(
            (
                "pad_token_id",
                "bos_token_id",
                "eos_token_id",
                "decoder_start_token_id",
                "sep_token_id",
                "cls_token_id",
                "mask_token_id",
                "unk_token_id",
            )
        ):
            token = getattr(config, key, None)
            if isinstance(token, int) and token >= vocab:
                setattr(config, key, number % 3)
    for key in ("layer_types", "mlp_layer_types"):
        kinds = getattr(config, key, None)
        if isinstance(kinds, list) and kinds:
            layers = getattr(config, "num_hidden_layers", len(kinds))
            distinct = list(dict.fromkeys(kinds))  # every kind of layer stays (a hybrid keeps an attention layer)
            chosen = distinct + kinds[: max(layers - len(distinct), 0)] if len(distinct) <= layers else kinds[:layers]
            setattr(config, key, chosen)
            if len(chosen) > layers and hasattr(config, "num_hidden_layers"):
                config.num_hidden_layers = len(chosen)
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout"):
        if isinstance(getattr(config, key, None), float):
            setattr(config, key, 0.0)  # only LayerDrop-like randomness stays in training


def inputs_for(model: torch.nn.Module, config: transformers.PretrainedConfig) -> Inputs:
    name = getattr(model, "main_input_name", "input_ids")
    generator = torch.Generator().manual_seed(0)
    if name == "input_ids":
        vocab = int(
            getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", 128)
        )
        ids = torch.randint(3, min(vocab, 128), (2, SEQ), generator=generator)
        mask = torch.ones(2, SEQ, dtype=torch.long)
        mask[1, :3] = 0  # left padding on the second row
        inputs: Inputs = {"input_ids": ids, "attention_mask": mask}
        if getattr(config, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = ids[:, :4].clone()
        if (
            "pixel_values" in inspect.signature(model.forward).parameters
            and getattr(config, "vision_config", None) is not None
        ):
            inputs.update(_pixels(config.vision_config, generator))  # two-tower models (CLIP-like) take both
        return inputs
    if name == "pixel_values":
        return _pixels(getattr(config, "vision_config", None) or config, generator)
    if name == "input_features":
        bins = getattr(config, "num_mel_bins", None) or getattr(config, "feature_size", 16)
        frames = 2 * getattr(config, "max_source_positions", 32)
        inputs = {"input_features": torch.randn(2, bins, frames, generator=generator)}
        if getattr(config, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = torch.randint(3, 100, (2, 4), generator=generator)
        return inputs
    if name == "input_values":
        values = torch.randn(2, AUDIO_SAMPLES, generator=generator)  # about 50 frames after the feature encoder
        mask = torch.ones(2, AUDIO_SAMPLES, dtype=torch.long)
        mask[1, AUDIO_SAMPLES * 3 // 4 :] = 0
        return {"input_values": values, "attention_mask": mask}
    raise ValueError(f"no inputs for main_input_name {name!r}")


def _pixels(vision: transformers.PretrainedConfig, generator: torch.Generator) -> Inputs:
    size = getattr(vision, "image_size", 32)
    size = size[0] if isinstance(size, (list, tuple)) else size
    channels = getattr(vision, "num_channels", 3)
    return {"pixel_values": torch.randn(2, channels, size, size, generator=generator)}


def build(model_type: str) -> tuple[torch.nn.Module, Inputs]:
    config = tiny_config(model_type)
    model = AutoModel.from_config(config)
    return model, inputs_for(model, config)
