"""Modelled on transformers 4.49.0 `models/phi3/modular_phi3.py:258`: the long-RoPE frequency
switch of a class whose `__init__` (and so its buffers) comes from a base in another module."""
import torch

from .base import RotaryBase


class LongRope(RotaryBase):
    def __init__(self, original_max=3):
        super().__init__()
        self.original_max = original_max

    def _update(self, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.original_max:  # dynamo: break
            self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
        else:
            self.original_inv_freq = self.original_inv_freq.to(position_ids.device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)

    def forward(self, x, position_ids):
        self._update(position_ids)
        freqs = position_ids[:, None].float() * self.inv_freq[None, :]
        return x * freqs.cos().sum()
