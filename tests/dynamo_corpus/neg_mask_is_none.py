"""`if mask is None` on an optional argument is static: no break."""
from typing import Optional

import torch


def attend(q, k, mask: Optional[torch.Tensor] = None):
    scores = q @ k.transpose(-1, -2)
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    scores = scores.masked_fill(~mask, -1e9)
    return scores.softmax(-1)


@torch.compile(backend="eager")
def f(q, k, mask):
    return attend(q, k) + attend(q, k, mask)


ENTRY = f
INPUTS = [
    (torch.ones(2, 2), torch.ones(2, 2), torch.tensor([[True, False], [True, True]])),
]
