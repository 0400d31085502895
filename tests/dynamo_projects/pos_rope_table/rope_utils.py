"""Modelled on transformers 4.49.0 `modeling_rope_utils.py`: a module-level table of RoPE
initialisers, each checking its arguments, whose dynamic-NTK one tests `seq_len` (annotated an int,
a tensor when the dynamic growth calls it from compiled code) at `modeling_rope_utils.py:155`."""
from typing import Optional

import torch


def _compute_default_rope_parameters(config, device=None, seq_len: Optional[int] = None, **rope_kwargs):
    if config is not None and len(rope_kwargs) > 0:
        raise ValueError(f"`rope_kwargs` and `config` are mutually exclusive, got {rope_kwargs}")
    dim = getattr(config, "head_dim", 4)
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float().to(device) / dim))
    return inv_freq, 1.0


def _compute_dynamic_ntk_parameters(config, device=None, seq_len: Optional[int] = None, **rope_kwargs):
    if config is not None and len(rope_kwargs) > 0:
        raise ValueError(f"`rope_kwargs` and `config` are mutually exclusive, got {rope_kwargs}")
    dim = getattr(config, "head_dim", 4)
    max_position_embeddings = config.max_position_embeddings
    factor = config.rope_scaling["factor"]
    seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings  # dynamo: break
    base = config.rope_theta * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float().to(device) / dim))
    return inv_freq, 1.0


ROPE_INIT_FUNCTIONS = {
    "default": _compute_default_rope_parameters,
    "dynamic": _compute_dynamic_ntk_parameters,
}
