"""Modelled on transformers 4.49.0 `models/llama/modeling_llama.py:108-118`: dynamic RoPE growth and
reset, whose initialiser is `ROPE_INIT_FUNCTIONS[self.rope_type]` of another module; and, as in
`models/phi3/modeling_phi3.py:397`, the same initialiser called with a Python int."""
import torch

from .rope_utils import ROPE_INIT_FUNCTIONS, _compute_dynamic_ntk_parameters


class Config:
    rope_theta = 10000.0
    max_position_embeddings = 4
    rope_scaling = {"rope_type": "dynamic", "factor": 2.0}
    head_dim = 4


class DynamicRotary(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.rope_type = config.rope_scaling["rope_type"]
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        self.rope_init_fn = ROPE_INIT_FUNCTIONS[self.rope_type]
        inv_freq, self.attention_scaling = self.rope_init_fn(self.config, None)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq

    def _dynamic_frequency_update(self, position_ids, device):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:  # dynamo: break
            inv_freq, self.attention_scaling = self.rope_init_fn(self.config, device, seq_len=seq_len)
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = seq_len

        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:  # dynamo: break
            self.original_inv_freq = self.original_inv_freq.to(device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
            self.max_seq_len_cached = self.original_max_seq_len

    def forward(self, x, position_ids):
        self._dynamic_frequency_update(position_ids, device=x.device)
        long_inv_freq, _ = _compute_dynamic_ntk_parameters(self.config, x.device, seq_len=self.original_max_seq_len + 1)
        freqs = position_ids[:, None].float() * self.inv_freq[None, :]
        return x * freqs.cos().sum() * self.attention_scaling + long_inv_freq.sum()
