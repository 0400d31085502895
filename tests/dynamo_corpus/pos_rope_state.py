"""transformers 4.49.0 models/llama/modeling_llama.py:108-118 (dynamic RoPE): grow the frequencies
past the cached length, reset them for short inputs. The state lives in attributes and a buffer;
the growth here computes frequencies with a same-file function graphmend proves pure."""
import torch


def scaled_frequencies(inv_freq, seq_len, limit):
    return inv_freq * (limit / seq_len)


class Rope(torch.nn.Module):
    def __init__(self, limit: int = 4):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, 4, 2).float() / 4))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq
        self.max_seq_len_cached = limit
        self.original_max_seq_len = limit

    def forward(self, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:  # dynamo: break
            inv_freq = scaled_frequencies(self.original_inv_freq, seq_len, self.original_max_seq_len)
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:  # dynamo: break
            self.original_inv_freq = self.original_inv_freq.to(position_ids.device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
            self.max_seq_len_cached = self.original_max_seq_len
        return position_ids[:, None].float() * self.inv_freq[None, :]


ENTRY = torch.compile(Rope(), backend="eager")
INPUTS = [
    (torch.arange(3),),
    (torch.arange(8),),
    (torch.arange(6),),
    (torch.arange(2),),
    (torch.arange(3),),
]
