"""A helper re-exported by its package's `__init__`, as transformers' models import
`_prepare_4d_attention_mask_for_sdpa` from `modeling_attn_mask_utils` (modeling_albert.py:28) and
timm its layers from `timm.layers` (which re-exports `timm/layers/mlp.py`)."""
import torch


def apply_rotary(x, cos):
    scale = cos.abs().max()
    if scale > 1:  # dynamo: break
        cos = cos / scale
    return x * cos
