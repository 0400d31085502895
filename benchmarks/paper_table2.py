"""Reproduce the GraphMend paper's Table 2 on transformers 4.49.0 with tiny random models, and extend it.

    python benchmarks/paper_table2.py [--cases A,B] [--json OUT] [--keep DIR] [--jobs N] [--timeout S] [--safe-only]

1. Copies the installed transformers package and runs `graphmend fix --unsafe-fixes` (with
   `--safe-only`, `graphmend fix`: the safe fixes alone) on the model files of every case (`models/<family>/modeling_<family>.py`) and on `harness.SHARED_FILES` in the copy.
2. For each case, in a fresh process per variant (installed = before, copy = after): builds the
   model from a tiny config with seeded random weights, compiles it with a counting backend, runs
   it on its inputs, and records the number of graphs, the graph-break sites (from Dynamo's
   graph_breaks log) and the first output (logits). Eval cases run under no_grad; `-fp16` cases
   run the model in half precision (the fp16 clamp guards only break there); `-train-layerdrop`
   cases run model.train() with layerdrop 0.5 and every dropout probability 0.0, reseeding
   before each forward so the layerdrop draws are the only randomness. Training cases also run
   backward (every parameter's gradient compared) and then, with layerdrop set to 0, 3 steps of SGD
   with momentum and of AdamW with weight decay (`zero_grad(set_to_none=True)`): the parameters after
   them must agree.
3. Prints the table: graphs before → after, break sites left, whether the outputs of before and
   after are bit-identical and allclose (NaN counts as equal to NaN in the same place), and whether
   compiled matched eager bit for bit in each variant; then the break sites that `graphmend check`
   does not flag in the installed files. `--json` writes the same rows.

Text inputs are a batch of 2 whose second row is padded (right for encoders and seq2seq models,
left for decoder-only LMs); audio inputs pad the second row's tail. Nothing is downloaded:
configs are built in code.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
import torch._dynamo
import torch._dynamo.testing
import transformers
from harness import (
    Gradients,
    close,
    collect_break_sites,
    exit_unless_imported_from,
    fixed_copy,
    flagged_lines,
    gradient_difference,
    identical,
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

Inputs = dict[str, Any]
Built = tuple[nn.Module, list[Inputs]]  # the model and the inputs of each forward call, in order

TRACE_LINES = "GRAPHMEND_TRACE_LINES"  # "1": the worker records the lines of models/ its eager run executes
TRAIN_SEEDS = (0, 1, 2)  # each training forward runs once per seed, reseeded just before
PAD_ROW_TOKENS = 2  # padding tokens in the second row of text inputs
# training config overrides: layerdrop 0.5 and every dropout 0.0, so the layerdrop draws are the only randomness
SEQ2SEQ_TRAIN = dict(
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, encoder_layerdrop=0.5, decoder_layerdrop=0.5
)
DECODER_TRAIN = dict(dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, layerdrop=0.5)
BIOGPT_TRAIN = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, activation_dropout=0.0, layerdrop=0.5)
AUDIO_TRAIN = dict(
    hidden_dropout=0.0,
    activation_dropout=0.0,
    attention_dropout=0.0,
    feat_proj_dropout=0.0,
    final_dropout=0.0,
    layerdrop=0.5,
)


@dataclass(frozen=True)
class Case:
    """One row of the table: a model family, how to build it, and how to run it."""

    name: str
    family: str  # the folder under transformers/models whose modeling file is fixed
    build: Callable[[], Built]
    half: bool = False
    train: bool = False


# ---------------------------------------------------------------- inputs


def _text(seq: int, pad_id: int, left: bool = False, low: int = 3, vocab: int = 32) -> Inputs:
    """Token ids of shape (2, seq) and their attention mask; the second row is padded."""
    ids = torch.randint(low, vocab, (2, seq))
    mask = torch.ones_like(ids)
    pad = slice(0, PAD_ROW_TOKENS) if left else slice(seq - PAD_ROW_TOKENS, seq)
    ids[1, pad] = pad_id
    mask[1, pad] = 0
    return dict(input_ids=ids, attention_mask=mask)


def _seq2seq_inputs(pad_id: int, source: int = 6, target: int = 4) -> Inputs:
    """Encoder ids and decoder ids, both right-padded in the second row."""
    encoder, decoder = _text(source, pad_id), _text(target, pad_id)
    return dict(**encoder, decoder_input_ids=decoder["input_ids"], decoder_attention_mask=decoder["attention_mask"])


def _audio(batch_frames: tuple[int, ...], padded: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random features of shape (2, frames, ...) with the last `padded` frames of the second row zeroed."""
    features = torch.randn(2, *batch_frames)
    mask = torch.ones(2, batch_frames[0], dtype=torch.long)
    features[1, -padded:] = 0
    mask[1, -padded:] = 0
    return features, mask


# ---------------------------------------------------------------- the paper's cases (unpadded, as published)


def _t5() -> Built:
    config = transformers.T5Config(
        vocab_size=32,
        d_model=16,
        d_kv=4,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        feed_forward_proj="gated-gelu",
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    model = transformers.T5ForConditionalGeneration(config)
    return model, [dict(input_ids=torch.randint(1, 32, (1, 6)), decoder_input_ids=torch.randint(1, 32, (1, 4)))]


def _phi3(seq: int) -> Built:
    config = transformers.Phi3Config(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
        original_max_position_embeddings=4,
        pad_token_id=0,
        rope_scaling={"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4},
    )
    return transformers.Phi3ForCausalLM(config), [dict(input_ids=torch.randint(1, 32, (1, seq)))]


def _longformer() -> Built:
    config = transformers.LongformerConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        attention_window=[4, 4],
        max_position_embeddings=64,
        pad_token_id=1,
    )
    return transformers.LongformerModel(config), [dict(input_ids=torch.randint(2, 32, (1, 7)))]


def _qwen2_audio() -> Built:
    audio = transformers.Qwen2AudioEncoderConfig(
        num_mel_bins=8,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=32,
        d_model=16,
        max_source_positions=8,
    )
    text = transformers.Qwen2Config(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = transformers.Qwen2AudioForConditionalGeneration(
        transformers.Qwen2AudioConfig(audio_config=audio, text_config=text, audio_token_index=50)
    )
    ids = torch.tensor([[1, 2] + [50] * 4 + [3, 4]])  # 16 mel frames -> 4 audio tokens (expanded inputs)
    return model, [
        dict(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            input_features=torch.randn(1, 8, 16),
            feature_attention_mask=torch.ones(1, 16, dtype=torch.long),
        )
    ]


def _mixtral() -> Built:
    config = transformers.MixtralConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=32,
        pad_token_id=0,
    )
    return transformers.MixtralForCausalLM(config), [dict(input_ids=torch.randint(1, 32, (1, 6)))]


# ---------------------------------------------------------------- encoder-decoder text models


def _model_class(name: str) -> type[transformers.PreTrainedModel]:
    """A transformers model class by name, looked up only when built (a worker imports one model's modules)."""
    return getattr(transformers, name)


def _bart_like(model: str, **overrides: Any) -> Built:
    """A BART-style seq2seq model (its config takes BART's argument names)."""
    model_class = _model_class(model)
    config = model_class.config_class(
        vocab_size=32,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        **overrides,
    )
    return model_class(config), [_seq2seq_inputs(pad_id=1)]


def _fsmt(**overrides: Any) -> Built:
    config = transformers.FSMTConfig(
        langs=["en", "de"],
        src_vocab_size=32,
        tgt_vocab_size=32,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        **overrides,
    )
    return transformers.FSMTForConditionalGeneration(config), [_seq2seq_inputs(pad_id=1)]


def _led(**overrides: Any) -> Built:
    config = transformers.LEDConfig(
        vocab_size=32,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        attention_window=4,
        max_encoder_position_embeddings=64,
        max_decoder_position_embeddings=32,
        **overrides,
    )
    return transformers.LEDForConditionalGeneration(config), [_seq2seq_inputs(pad_id=1, source=7)]


def _nllb_moe(**overrides: Any) -> Built:
    config = transformers.NllbMoeConfig(
        vocab_size=32,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        num_experts=4,
        expert_capacity=8,
        encoder_sparse_step=2,
        decoder_sparse_step=2,
        **overrides,
    )
    return transformers.NllbMoeForConditionalGeneration(config), [_seq2seq_inputs(pad_id=1)]


def _t5_like(model: str, **overrides: Any) -> Built:
    """A T5-style seq2seq model (pad 0, decoder starts at 0)."""
    model_class = _model_class(model)
    config = model_class.config_class(
        vocab_size=32,
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        **overrides,
    )
    return model_class(config), [_seq2seq_inputs(pad_id=0, source=10)]


def _pix2struct_text() -> Built:
    config = transformers.Pix2StructTextConfig(
        vocab_size=32, hidden_size=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, initializer_range=0.02
    )  # read by _init_weights
    return transformers.Pix2StructTextModel(config), [_text(6, pad_id=0)]


# ---------------------------------------------------------------- speech models


def _whisper(**overrides: Any) -> Built:
    config = transformers.WhisperConfig(
        vocab_size=32,
        num_mel_bins=8,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        d_model=16,
        max_source_positions=8,
        max_target_positions=16,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        begin_suppress_tokens=None,
        **overrides,
    )
    model = transformers.WhisperForConditionalGeneration(config)
    decoder = _text(4, pad_id=1)
    features = torch.randn(2, 8, 16)  # Whisper's encoder takes exactly 2 * max_source_positions frames, no mask
    return model, [
        dict(
            input_features=features,
            decoder_input_ids=decoder["input_ids"],
            decoder_attention_mask=decoder["attention_mask"],
        )
    ]


def _speech_to_text(**overrides: Any) -> Built:
    config = transformers.Speech2TextConfig(
        vocab_size=32,
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_source_positions=32,
        max_target_positions=32,
        conv_channels=16,
        input_feat_per_channel=8,
        **overrides,
    )
    model = transformers.Speech2TextForConditionalGeneration(config)
    features, mask = _audio((20, 8), padded=6)
    decoder = _text(4, pad_id=1)
    return model, [
        dict(
            input_features=features,
            attention_mask=mask,
            decoder_input_ids=decoder["input_ids"],
            decoder_attention_mask=decoder["attention_mask"],
        )
    ]


def _wav2vec2_like(model: str, **overrides: Any) -> Built:
    """A wav2vec2-style CTC model on 400 raw samples (48 frames); SpecAugment off (it draws from numpy)."""
    model_class = _model_class(model)
    config = model_class.config_class(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(16, 16),
        conv_stride=(4, 2),
        conv_kernel=(8, 4),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        apply_spec_augment=False,
        mask_time_prob=0.0,
        **overrides,
    )
    values, mask = _audio((400,), padded=120)
    return model_class(config), [dict(input_values=values, attention_mask=mask)]


# ---------------------------------------------------------------- decoder-only LMs (left padding)


def _causal(config: transformers.PretrainedConfig, model_class: type, seqs: tuple[int, ...] = (6,)) -> Built:
    """A causal LM run on left-padded batches, one forward per sequence length in `seqs`."""
    pad_id = config.pad_token_id if config.pad_token_id is not None else 0
    return model_class(config), [_text(seq, pad_id, left=True) for seq in seqs]


def _opt(**overrides: Any) -> Built:
    return _causal(
        transformers.OPTConfig(
            vocab_size=32,
            hidden_size=16,
            num_hidden_layers=2,
            ffn_dim=32,
            num_attention_heads=2,
            max_position_embeddings=32,
            word_embed_proj_dim=16,
            **overrides,
        ),
        transformers.OPTForCausalLM,
    )


def _biogpt(**overrides: Any) -> Built:
    return _causal(
        transformers.BioGptConfig(
            vocab_size=32,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
            **overrides,
        ),
        transformers.BioGptForCausalLM,
    )


def _xglm(**overrides: Any) -> Built:
    return _causal(
        transformers.XGLMConfig(
            vocab_size=32,
            d_model=16,
            ffn_dim=32,
            num_layers=2,
            attention_heads=2,
            max_position_embeddings=32,
            **overrides,
        ),
        transformers.XGLMForCausalLM,
    )


def _gpt_neox(rope_scaling: dict[str, Any] | None = None) -> Built:
    """GPT-NeoX; with dynamic RoPE, a sequence past max_position_embeddings (growth) then a short one (reset)."""
    config = transformers.GPTNeoXConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        rotary_pct=0.5,
        pad_token_id=1,
        max_position_embeddings=8 if rope_scaling else 32,
        rope_scaling=rope_scaling,
    )
    return _causal(config, transformers.GPTNeoXForCausalLM, seqs=(12, 4) if rope_scaling else (6,))


def _llama_dynamic_rope() -> Built:
    """Llama with dynamic RoPE: a sequence past max_position_embeddings (growth) then a short one (reset)."""
    config = transformers.LlamaConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=8,
        pad_token_id=0,
        rope_scaling={"rope_type": "dynamic", "factor": 2.0},
    )
    return _causal(config, transformers.LlamaForCausalLM, seqs=(12, 4))


def _dynamic_rope(config: transformers.PretrainedConfig, model_class: type, dynamic: bool) -> Built:
    """One forward; with dynamic RoPE (max_position_embeddings 8), a sequence past it (growth)
    then a short one (reset)."""
    if not dynamic:
        return _causal(config, model_class, seqs=(8,) if getattr(config, "sliding_window", None) else (6,))
    config.rope_scaling = {"rope_type": "dynamic", "factor": 2.0}
    config.max_position_embeddings = 8
    return _causal(config, model_class, seqs=(12, 4))


def _qwen2(dynamic: bool = False) -> Built:
    return _dynamic_rope(
        transformers.Qwen2Config(
            vocab_size=32,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=32,
            pad_token_id=0,
        ),
        transformers.Qwen2ForCausalLM,
        dynamic,
    )


def _gemma(dynamic: bool = False) -> Built:
    return _dynamic_rope(
        transformers.GemmaConfig(
            vocab_size=32,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=8,
            max_position_embeddings=32,
        ),
        transformers.GemmaForCausalLM,
        dynamic,
    )


def _mistral(dynamic: bool = False) -> Built:
    """Mistral with a 4-token sliding window on 8 tokens."""
    return _dynamic_rope(
        transformers.MistralConfig(
            vocab_size=32,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=32,
            sliding_window=4,
            pad_token_id=0,
        ),
        transformers.MistralForCausalLM,
        dynamic,
    )


def _olmo(dynamic: bool = False) -> Built:
    return _dynamic_rope(
        transformers.OlmoConfig(
            vocab_size=32,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=32,
            pad_token_id=1,
        ),
        transformers.OlmoForCausalLM,
        dynamic,
    )


def _zamba() -> Built:
    """Zamba (two Mamba layers, then a hybrid one with the shared attention block) on the kernel-free Mamba path."""
    config = transformers.ZambaConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=2,
        n_mamba_heads=1,
        attn_layer_period=2,
        attn_layer_offset=1,
        mamba_d_state=4,
        mamba_d_conv=4,
        mamba_expand=2,
        use_mamba_kernels=False,
        max_position_embeddings=32,
    )
    return _causal(config, transformers.ZambaForCausalLM)


# ---------------------------------------------------------------- the case table


def _with_ctc_labels(build: Callable[..., Built]) -> Built:
    """A CTC model's inputs with `labels`: its loss path (and the label check before it) runs."""
    model, calls = build()
    batch = calls[0]["input_values"].shape[0]
    return model, [dict(inputs, labels=torch.randint(1, 32, (batch, 4))) for inputs in calls]


def _tiny_decoder(model: str, **overrides: Any) -> Built:
    """A decoder-only LM from its config class with tiny sizes (names mapped by each config's
    attribute_map), run on a left-padded batch."""
    model_class = _model_class(model)
    settings = dict(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        pad_token_id=0,
    )
    return _causal(model_class.config_class(**{**settings, **overrides}), model_class)


def _variants(
    name: str, family: str, build: Callable[..., Built], fp16: bool = False, train: dict[str, float] | None = None
) -> list[Case]:
    """The eval case, plus its fp16 twin and its training twin (`build` with the `train` config overrides)."""
    cases = [Case(name, family, build)]
    if fp16:
        cases.append(Case(f"{name}-fp16", family, build, half=True))
    if train:
        cases.append(Case(f"{name}-train-layerdrop", family, partial(build, **train), train=True))
    return cases


CASES: dict[str, Case] = {
    case.name: case
    for case in [
        Case("t5", "t5", _t5),
        Case("phi3-long-seq8", "phi3", partial(_phi3, 8)),
        Case("phi3-short-seq3", "phi3", partial(_phi3, 3)),
        Case("longformer-seq7", "longformer", _longformer),
        Case("qwen2-audio", "qwen2_audio", _qwen2_audio),
        Case("mixtral-moe", "mixtral", _mixtral),
        *_variants("bart", "bart", partial(_bart_like, "BartForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN),
        *_variants(
            "mbart", "mbart", partial(_bart_like, "MBartForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN
        ),
        *_variants("marian", "marian", partial(_bart_like, "MarianMTModel"), fp16=True, train=SEQ2SEQ_TRAIN),
        *_variants(
            "pegasus", "pegasus", partial(_bart_like, "PegasusForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN
        ),
        *_variants(
            "blenderbot",
            "blenderbot",
            partial(_bart_like, "BlenderbotForConditionalGeneration"),
            fp16=True,
            train=SEQ2SEQ_TRAIN,
        ),
        *_variants(
            "blenderbot-small",
            "blenderbot_small",
            partial(_bart_like, "BlenderbotSmallForConditionalGeneration"),
            fp16=True,
            train=SEQ2SEQ_TRAIN,
        ),
        *_variants(
            "plbart", "plbart", partial(_bart_like, "PLBartForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN
        ),
        *_variants("mvp", "mvp", partial(_bart_like, "MvpForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN),
        *_variants(
            "m2m100", "m2m_100", partial(_bart_like, "M2M100ForConditionalGeneration"), fp16=True, train=SEQ2SEQ_TRAIN
        ),
        *_variants("fsmt", "fsmt", _fsmt, train=SEQ2SEQ_TRAIN),
        *_variants("led-seq7", "led", _led, fp16=True),
        *_variants("nllb-moe", "nllb_moe", _nllb_moe, fp16=True),
        *_variants(
            "longt5-tglobal",
            "longt5",
            partial(
                _t5_like,
                "LongT5ForConditionalGeneration",
                local_radius=2,
                global_block_size=4,
                encoder_attention_type="transient-global",
            ),
            fp16=True,
        ),
        *_variants(
            "switch-moe",
            "switch_transformers",
            partial(
                _t5_like,
                "SwitchTransformersForConditionalGeneration",
                num_sparse_encoder_layers=1,
                num_sparse_decoder_layers=1,
                num_experts=4,
                expert_capacity=8,
            ),
            fp16=True,
        ),
        *_variants("pix2struct-text", "pix2struct", _pix2struct_text, fp16=True),
        *_variants("whisper", "whisper", _whisper, fp16=True, train=SEQ2SEQ_TRAIN),
        *_variants("speech2text", "speech_to_text", _speech_to_text, fp16=True, train=SEQ2SEQ_TRAIN),
        *_variants(
            "wav2vec2-stable-ln",
            "wav2vec2",
            partial(_wav2vec2_like, "Wav2Vec2ForCTC", feat_extract_norm="layer", do_stable_layer_norm=True),
            train=AUDIO_TRAIN,
        ),
        *_variants("hubert", "hubert", partial(_wav2vec2_like, "HubertForCTC"), train=AUDIO_TRAIN),
        *_variants("opt", "opt", _opt, train=DECODER_TRAIN),
        *_variants("xglm", "xglm", _xglm, train=DECODER_TRAIN),
        *_variants("biogpt", "biogpt", _biogpt, train=BIOGPT_TRAIN),
        Case("gpt-neox", "gpt_neox", _gpt_neox),
        Case("gpt-neox-dynamic-rope", "gpt_neox", partial(_gpt_neox, {"rope_type": "dynamic", "factor": 2.0})),
        Case("llama-dynamic-rope", "llama", _llama_dynamic_rope),
        Case("qwen2", "qwen2", _qwen2),
        Case("qwen2-dynamic-rope", "qwen2", partial(_qwen2, True)),
        Case("gemma", "gemma", _gemma),
        Case("gemma-dynamic-rope", "gemma", partial(_gemma, True)),
        Case("mistral-sliding", "mistral", _mistral),
        Case("mistral-dynamic-rope", "mistral", partial(_mistral, True)),
        Case("olmo-dynamic-rope", "olmo", partial(_olmo, True)),
        Case("zamba", "zamba", _zamba),
    ]
}


def _tiny_encoder(model: str, seq: int = 6, **overrides: Any) -> Built:
    """An encoder-only model (BERT style) from its config class with tiny sizes, on a right-padded batch."""
    model_class = _model_class(model)
    settings = dict(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        pad_token_id=0,
    )
    merged = {key: value for key, value in {**settings, **overrides}.items() if value is not None}  # None: leave out
    return model_class(model_class.config_class(**merged)), [_text(seq, pad_id=0)]


def _tiny_vision(model: str, **overrides: Any) -> Built:
    """An image model from its config class with tiny sizes, on a batch of two random 32x32 images."""
    model_class = _model_class(model)
    settings = dict(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
    )
    return model_class(model_class.config_class(**{**settings, **overrides})), [
        dict(pixel_values=torch.randn(2, 3, 32, 32))
    ]


def _for_training(build: Callable[[], Built]) -> Built:
    """`build`'s model made ready for a training run whose only randomness is layerdrop: every dropout and
    drop-path probability 0 and every layerdrop probability 0.5, in the configs and in the modules' own copies
    (layers copy `config.dropout` into attributes at construction)."""
    model, calls = build()
    configs = [
        model.config,
        *(value for value in vars(model.config).values() if isinstance(value, transformers.PretrainedConfig)),
    ]
    for owner in [*configs, *model.modules()]:
        for key, value in list(vars(owner).items()):
            if not isinstance(value, float) or isinstance(value, bool):
                continue
            if "layerdrop" in key:
                setattr(owner, key, 0.5)
            elif "dropout" in key or "drop_path" in key or key == "drop_prob":
                setattr(owner, key, 0.0)
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    return model, calls


# More configurations and architectures for benchmarks/agreement.py (not part of Table 2's runs).
_MORE_ARCHITECTURES: list[Case] = [
    Case("led-seq7-train-layerdrop", "led", partial(_led, **SEQ2SEQ_TRAIN), train=True),
    Case(
        "nllb-moe-train-layerdrop", "nllb_moe", partial(_nllb_moe, moe_token_dropout=0.0, **SEQ2SEQ_TRAIN), train=True
    ),
    Case("wav2vec2-ctc-labels", "wav2vec2", partial(_with_ctc_labels, partial(_wav2vec2_like, "Wav2Vec2ForCTC"))),
    Case("hubert-ctc-labels", "hubert", partial(_with_ctc_labels, partial(_wav2vec2_like, "HubertForCTC"))),
    *(
        Case(f"{family}-tiny", family, partial(_tiny_decoder, model, **overrides))
        for family, model, overrides in (
            ("gpt2", "GPT2LMHeadModel", {}),
            ("gptj", "GPTJForCausalLM", {"rotary_dim": 4}),
            ("bloom", "BloomForCausalLM", {}),
            ("falcon", "FalconForCausalLM", {}),
            ("phi", "PhiForCausalLM", {}),
            ("stablelm", "StableLmForCausalLM", {}),
            ("starcoder2", "Starcoder2ForCausalLM", {}),
            (
                "qwen2_moe",
                "Qwen2MoeForCausalLM",
                {
                    "num_experts": 4,
                    "num_experts_per_tok": 2,
                    "moe_intermediate_size": 16,
                    "shared_expert_intermediate_size": 16,
                },
            ),
            ("olmoe", "OlmoeForCausalLM", {"num_experts": 4, "num_experts_per_tok": 2}),
            ("codegen", "CodeGenForCausalLM", {"rotary_dim": 4, "hidden_size": 32, "num_attention_heads": 4}),
            ("gpt_bigcode", "GPTBigCodeForCausalLM", {}),
            ("persimmon", "PersimmonForCausalLM", {}),
        )
    ),
    *(
        Case(f"{family}-tiny", family, partial(_tiny_encoder, model, **overrides))
        for family, model, overrides in (
            ("bert", "BertForMaskedLM", {}),
            ("roberta", "RobertaForMaskedLM", {"pad_token_id": 1}),
            ("distilbert", "DistilBertForMaskedLM", {"hidden_dim": 32}),
            ("albert", "AlbertForMaskedLM", {"embedding_size": 16}),
            ("electra", "ElectraForMaskedLM", {"embedding_size": 16}),
            ("deberta_v2", "DebertaV2ForMaskedLM", {}),
            ("mpnet", "MPNetForMaskedLM", {"pad_token_id": 1}),
            ("roformer", "RoFormerForMaskedLM", {"embedding_size": 16}),
            (
                "big_bird",
                "BigBirdForMaskedLM",
                {"attention_type": "block_sparse", "block_size": 2, "num_random_blocks": 1, "seq": 16},
            ),
            (
                "funnel",
                "FunnelForMaskedLM",
                {"block_sizes": [1, 1], "num_hidden_layers": None, "d_head": 8, "d_inner": 32},
            ),
            ("esm", "EsmForMaskedLM", {"pad_token_id": 1, "position_embedding_type": "rotary"}),
        )
    ),
    *(
        Case(f"{family}-tiny", family, partial(_tiny_vision, model, **overrides))
        for family, model, overrides in (
            ("vit", "ViTForImageClassification", {}),
            ("deit", "DeiTForImageClassification", {}),
            ("beit", "BeitForImageClassification", {"use_relative_position_bias": True}),
            ("dinov2", "Dinov2Model", {"mlp_ratio": 2}),
            (
                "swin",
                "SwinForImageClassification",
                {"patch_size": 4, "embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 2},
            ),
            (
                "convnext",
                "ConvNextForImageClassification",
                {"num_stages": 2, "hidden_sizes": [8, 16], "depths": [1, 1]},
            ),
            (
                "resnet",
                "ResNetForImageClassification",
                {"embedding_size": 8, "hidden_sizes": [8, 16], "depths": [1, 1]},
            ),
            ("vit_mae", "ViTMAEModel", {}),
            ("clip", "CLIPVisionModel", {}),
            (
                "segformer",
                "SegformerForSemanticSegmentation",
                {
                    "num_encoder_blocks": 2,
                    "depths": [1, 1],
                    "sr_ratios": [2, 1],
                    "hidden_sizes": [8, 16],
                    "patch_sizes": [7, 3],
                    "strides": [4, 2],
                    "num_attention_heads": [1, 2],
                    "decoder_hidden_size": 16,
                },
            ),
        )
    ),
]


def _every_configuration(cases: list[Case], known: dict[str, Case]) -> dict[str, Case]:
    """`cases`, plus for each family that lacks one an fp16-eval twin and a training twin of its first fp32
    eval case (the training twin through `_for_training`), so every architecture runs all three ways."""
    everything = [*known.values(), *cases]
    added = {}
    for family in dict.fromkeys(case.family for case in everything):
        own = [case for case in everything if case.family == family]
        first = next(case for case in own if not case.half and not case.train)
        if not any(case.half for case in own):
            added[f"{first.name}-fp16"] = Case(f"{first.name}-fp16", family, first.build, half=True)
        if not any(case.train for case in own):
            added[f"{first.name}-train"] = Case(
                f"{first.name}-train", family, partial(_for_training, first.build), train=True
            )
    return {case.name: case for case in cases} | added


EXTRA_CASES: dict[str, Case] = _every_configuration(_MORE_ARCHITECTURES, CASES)


# ---------------------------------------------------------------- the worker (one case, one variant, one process)


def _assert_only_layerdrop_is_random(model: nn.Module) -> None:
    """Training cases must draw nothing but layerdrop: every dropout probability is 0."""
    config = model.config.to_dict()
    configs = [config] + [value for value in config.values() if isinstance(value, dict)]
    live = [
        f"{key}={value}"
        for part in configs
        for key, value in part.items()
        if "dropout" in str(key) and "layerdrop" not in str(key) and isinstance(value, float) and value != 0.0
    ]
    live += [name for name, module in model.named_modules() if isinstance(module, nn.Dropout) and module.p != 0.0]
    if live:
        raise SystemExit(f"training case has live dropout: {', '.join(live)}")


def _forward(
    model: nn.Module, calls: list[Inputs], seeds: tuple[int, ...], backward: bool = False
) -> tuple[list[torch.Tensor], list[Gradients]]:
    """The first output (logits) of every call under every seed, reseeding just before each forward;
    with `backward`, every parameter's gradient after the backward of that output's sum."""
    outputs, gradients = [], []
    for inputs in calls:
        for seed in seeds:
            torch.manual_seed(seed)
            output = model(**inputs)[0]
            outputs.append(output.detach())
            if backward:
                gradients.append(parameter_gradients(model, output))
    return outputs, gradients


def _outputs(model: nn.Module, calls: list[Inputs], seeds: tuple[int, ...]) -> list[torch.Tensor]:
    """The first output of every call under every seed, reseeded before each, as one step's losses."""
    outputs = []
    for inputs in calls:
        for seed in seeds:
            torch.manual_seed(seed)
            outputs.append(model(**inputs)[0])
    return outputs


def _models_file(path: str) -> str | None:
    """A file of `transformers/models/` by its path inside the package (the others are not traced)."""
    return path.split("/transformers/")[-1] if "/transformers/models/" in path else None


def worker(name: str, out: Path, expected_package: Path) -> None:
    """Build, compile and run one case; write its record to `out` and its outputs to `out`.pt."""
    exit_unless_imported_from(expected_package)
    torch.set_num_threads(1)  # same numerics whatever else runs beside this process
    sites = collect_break_sites()
    transformers.logging.set_verbosity_error()

    case = CASES[name] if name in CASES else EXTRA_CASES[name]
    torch.manual_seed(0)
    model, calls = case.build()
    if case.half:
        model.half()
        calls = [
            {
                key: value.half() if torch.is_tensor(value) and value.is_floating_point() else value
                for key, value in inputs.items()
            }
            for inputs in calls
        ]
    if case.train:
        _assert_only_layerdrop_is_random(model)
        if "use_cache" in inspect.signature(model.forward).parameters:
            calls = [dict(inputs, use_cache=False) for inputs in calls]
    model.train(case.train)
    seeds = TRAIN_SEEDS if case.train else (0,)
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(model, backend=counter)
    executed: dict[str, set[int]] = {}
    with torch.set_grad_enabled(case.train):
        if os.environ.get(TRACE_LINES) == "1":  # benchmarks/agreement.py: which lines of models/ run
            sys.settrace(partial(trace_lines, _models_file, executed))
        try:
            eager, _ = _forward(model, calls, seeds)
        finally:
            sys.settrace(None)
        torch._dynamo.reset()
        output, gradients = _forward(compiled, calls, seeds, backward=case.train)
        graphs = counter.frame_count  # before the steps: layerdrop set to 0 recompiles
        if case.train:  # optimiser steps with no layer skipped: the parameters after must agree
            without_layerdrop(model)
            steps = optimiser_steps(model, partial(_outputs, compiled, calls, seeds))
    torch.save(output, f"{out}.pt")
    torch.save(gradients, f"{out}.grads.pt")
    if case.train:
        torch.save(steps, f"{out}.steps.pt")
    out.write_text(
        json.dumps(
            {
                "executed": {path: sorted(lines) for path, lines in executed.items()},
                "graphs": graphs,
                "reasons": sites,
                "sites": sorted(sites, key=lambda site: (site.rsplit(":", 1)[0], int(site.rsplit(":", 1)[1]))),
                "compiled_equal_eager": same(output, eager, identical),
                "compiledclose_eager": same(output, eager, close),
                "nan_in_outputs": any(bool(tensor.isnan().any()) for tensor in output),
                "transformers": transformers.__file__,
            }
        )
    )


# ---------------------------------------------------------------- the driver


def run_variant(case: str, package: Path, pythonpath: Path | None, out: Path, timeout: float) -> dict[str, Any]:
    """Run the worker for one variant in a fresh process; its record, or {"error": why}."""
    return run_worker(__file__, [case, str(out), str(package)], worker_env(pythonpath), out, timeout)


def unflagged_sites(rows: list[dict[str, Any]], installed: Path) -> None:
    """Add to each row the break sites (before the fix, in transformers) that no graphmend diagnostic covers."""

    def located(site: str) -> tuple[Path, int]:
        path, line = site.rsplit(":", 1)
        return (installed / path).resolve(), int(line)

    files = sorted({located(site)[0] for row in rows for site in row["sites_before"] if located(site)[0].is_file()})
    spans = flagged_lines(files) if files else {}
    for row in rows:
        row["unflagged_before"] = [
            site
            for site in row["sites_before"]
            if located(site)[0] in spans
            and not any(first <= located(site)[1] <= last for first, last in spans[located(site)[0]])
        ]


def compare(case: Case, before: dict[str, Any], after: dict[str, Any], work: Path) -> dict[str, Any]:
    """One JSON row: graphs and sites before/after and whether the outputs agree."""
    row: dict[str, Any] = {
        "case": case.name,
        "mode": "train" if case.train else "eval",
        "dtype": "float16" if case.half else "float32",
        "graphs_before": before.get("graphs"),
        "graphs_after": after.get("graphs"),
        "sites_before": before.get("sites", []),
        "sites_after": after.get("sites", []),
        "reasons_before": before.get("reasons", {}),
        "reasons_after": after.get("reasons", {}),
        "compiled_equal_eager_before": before.get("compiled_equal_eager"),
        "compiled_equal_eager_after": after.get("compiled_equal_eager"),
        "compiledclose_eager_before": before.get("compiledclose_eager"),
        "compiledclose_eager_after": after.get("compiledclose_eager"),
        "nan_in_outputs": bool(before.get("nan_in_outputs") or after.get("nan_in_outputs")),
        "error_before": before.get("error"),
        "error_after": after.get("error"),
        "logits_equal": None,
        "logits_allclose": None,
        "gradients_differ": None,  # training cases: the first difference in words, "" when none
        "gradients_zero_for_none": None,  # training cases: parameter gradients zero after, none before
        "parameters_after_steps_differ": None,  # training cases without layerdrop: the first difference, "" when none
    }
    if "error" not in before and "error" not in after:
        first, second = (torch.load(work / f"{case.name}.{variant}.json.pt") for variant in ("before", "after"))
        row["logits_equal"], row["logits_allclose"] = same(first, second, identical), same(first, second, close)
        if case.train:
            old, new = (torch.load(work / f"{case.name}.{variant}.json.grads.pt") for variant in ("before", "after"))
            differ, row["gradients_zero_for_none"] = gradient_difference(old, new)
            row["gradients_differ"] = differ or ""
            old, new = (torch.load(work / f"{case.name}.{variant}.json.steps.pt") for variant in ("before", "after"))
            row["parameters_after_steps_differ"] = parameters_difference(old, new) or ""
    return row


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "NO")


def _gradients(row: dict[str, Any]) -> str:
    """Training cases: whether every parameter's gradient agrees before/after, or the first difference."""
    differ, zeros = row.get("gradients_differ"), row.get("gradients_zero_for_none")
    if differ is None:
        return "—"
    if differ:
        return "NO: " + differ.replace("|", "\\|")
    return f"yes ({zeros} zero for none ‡)" if zeros else "yes"


def _steps(row: dict[str, Any]) -> str:
    """Training cases: whether the parameters agree after SGD and AdamW steps without layerdrop."""
    differ = row.get("parameters_after_steps_differ")
    return "—" if differ is None else ("NO: " + differ.replace("|", "\\|") if differ else "yes")


def _cell(row: dict[str, Any], variant: str) -> str:
    """A variant's break sites, or why it failed, for a markdown cell."""
    if row[f"error_{variant}"]:
        return "FAILED: " + row[f"error_{variant}"].replace("|", "\\|")
    return ", ".join(row[f"sites_{variant}"]) or "—"


def print_table(rows: list[dict[str, Any]]) -> None:
    """The markdown table, then the break sites graphmend does not flag."""
    print(
        "| case | graphs before | graphs after | break sites before | break sites left | fixed % "
        "| before = after (equal / allclose) | gradients before = after | parameters after 3 steps "
        "| compiled = eager (before / after) |"
    )
    print("|---|---:|---:|---|---|---:|---|---|---|---|")
    for row in rows:
        before, after = row["sites_before"], row["sites_after"]
        failed = row["error_before"] or row["error_after"]
        fixed = "—" if failed or not before else f"{100 * (len(before) - len(after)) / len(before):.0f}%"
        graphs = ["—" if row[key] is None else row[key] for key in ("graphs_before", "graphs_after")]
        name = row["case"] + (" †" if row["nan_in_outputs"] else "")
        print(
            f"| {name} | {graphs[0]} | {graphs[1]} | {_cell(row, 'before')} | {_cell(row, 'after')} | {fixed} "
            f"| {_yes(row['logits_equal'])} / {_yes(row['logits_allclose'])} "
            f"| {_gradients(row)} | {_steps(row)} "
            f"| {_yes(row['compiled_equal_eager_before'])} / {_yes(row['compiled_equal_eager_after'])} |"
        )
    if any(row["nan_in_outputs"] for row in rows):
        print("\n† the outputs contain NaN (in eager too); compared NaN-aware")
    if any(row.get("gradients_zero_for_none") for row in rows):
        print(
            "\n‡ parameter gradients (summed over the calls) that are zero after the fix where there were none before: "
            "a skipped layer's, which the fix runs and discards; every other gradient equal"
        )
    unflagged = {site: row["reasons_before"].get(site, "") for row in rows for site in row["unflagged_before"]}
    print("\nBreak sites that `graphmend check` does not flag (installed files):")
    for site, reason in sorted(unflagged.items()):
        cases = ", ".join(row["case"] for row in rows if site in row["unflagged_before"])
        print(f"- {site} ({reason}) — {cases}")
    if not unflagged:
        print("- none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help=f"comma-separated subset of: {', '.join(CASES)}")
    parser.add_argument("--json", type=Path, help="write the rows as JSON to this file")
    parser.add_argument("--keep", type=Path, help="folder for the fixed copy and outputs (default: a temp dir)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes at once (default 1)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per worker process (default 300)")
    parser.add_argument(
        "--safe-only", action="store_true", help="apply the safe fixes only (`graphmend fix` without flags)"
    )
    parser.add_argument("--worker", nargs=3, metavar=("CASE", "OUT", "PACKAGE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], Path(args.worker[1]), Path(args.worker[2]))
        return 0
    if transformers.__version__ != "4.49.0":
        print(f"needs transformers==4.49.0 (the paper's breaks), found {transformers.__version__}", file=sys.stderr)
        return 2
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [name for name in names if name not in CASES]
    if unknown:
        parser.error(f"unknown cases {', '.join(unknown)}; known: {', '.join(CASES)}")
    started = time.monotonic()
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphmend-table2-"))
    work.mkdir(parents=True, exist_ok=True)
    installed = Path(transformers.__file__).parent
    copy_root = fixed_copy(work, sorted({case.family for case in CASES.values()}), unsafe=not args.safe_only)
    variants = {"before": (installed, None), "after": (copy_root / "transformers", copy_root)}
    jobs = [(name, variant) for name in names for variant in variants]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        records = dict(
            zip(
                jobs,
                pool.map(
                    lambda job: run_variant(job[0], *variants[job[1]], work / f"{job[0]}.{job[1]}.json", args.timeout),
                    jobs,
                ),
            )
        )
    rows = [compare(CASES[name], records[name, "before"], records[name, "after"], work) for name in names]
    unflagged_sites(rows, installed)
    print()
    print_table(rows)
    print(f"\n{len(rows)} cases in {time.monotonic() - started:.0f} s (--jobs {args.jobs})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(row["logits_equal"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
