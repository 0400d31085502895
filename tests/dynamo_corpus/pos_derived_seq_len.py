"""Phi-3 style: `seq_len = torch.max(ids) + 1` then `if seq_len > limit:` with an int limit."""
import torch


class LongRope(torch.nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, position_ids, limit: int):
        seq_len = torch.max(position_ids) + 1
        if seq_len > limit:  # dynamo: break
            freq = self.inv_freq / 4.0
        else:
            freq = self.inv_freq
        emb = position_ids[:, None].float() * freq[None, :]
        return torch.cat([emb.cos(), emb.sin()], dim=-1)


ENTRY = torch.compile(LongRope(), backend="eager")
INPUTS = [
    (torch.arange(8), 4),
    (torch.arange(8) % 3, 4),
]
