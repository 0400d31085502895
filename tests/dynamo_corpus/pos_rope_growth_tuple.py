"""transformers 4.49.0 models/llama/modeling_llama.py:108-111 (dynamic RoPE growth): the frequencies
and the scaling factor come back as a tuple, one of them stored on `self`; here the function that
computes them is of the same file (transformers' comes from modeling_rope_utils: see
tests/dynamo_projects/pos_rope_table and pos_rope_function_table.py)."""
import torch


def dynamic_frequencies(base_inv_freq, seq_len, limit):
    return base_inv_freq * (limit / seq_len), 1.0


class Rope(torch.nn.Module):
    def __init__(self, limit: int = 4):
        super().__init__()
        self.register_buffer("inv_freq", torch.tensor([1.0, 0.1]), persistent=False)
        self.original_inv_freq = self.inv_freq
        self.attention_scaling = 1.0
        self.max_seq_len_cached = limit
        self.limit = limit

    def forward(self, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:  # dynamo: break
            inv_freq, self.attention_scaling = dynamic_frequencies(self.original_inv_freq, seq_len, self.limit)
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = seq_len
        return position_ids[:, None].float() * self.inv_freq[None, :] * self.attention_scaling


ENTRY = torch.compile(Rope(), backend="eager")
INPUTS = [(torch.arange(3),), (torch.arange(6),), (torch.arange(8),), (torch.arange(2),)]
