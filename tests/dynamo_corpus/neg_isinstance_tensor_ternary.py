"""The shape graphmend's rewrite of transformers 4.49.0 `modeling_rope_utils.py:155` leaves: a
parameter that is a tensor for some callers and an int for others, tested only on the side where
`isinstance(..., torch.Tensor)` says it is not a tensor — a Python comparison there."""
import torch


def grow(seq_len, limit: int):
    seq_len = seq_len.clamp(min=limit) if isinstance(seq_len, torch.Tensor) else (seq_len if seq_len > limit else limit)
    return seq_len * 2


@torch.compile(backend="eager")
def f(x, positions):
    return x * grow(torch.max(positions) + 1, 4) + grow(positions.shape[0] + 3, 4) + grow(2, 4)


ENTRY = f
INPUTS = [(torch.ones(2), torch.tensor([0, 1, 2])), (torch.ones(2), torch.tensor([0, 1, 7]))]
