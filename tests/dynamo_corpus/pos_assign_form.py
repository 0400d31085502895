"""Assignment form `f = torch.compile(g, backend="eager")` of a function with a data-dependent if."""
import torch


def _score(q, k):
    s = (q * k).sum(-1)
    if s.max() > 1.0:  # dynamo: break
        s = s / s.max()
    return torch.softmax(s, dim=-1)


score = torch.compile(_score, backend="eager")

ENTRY = score
INPUTS = [
    (torch.ones(3, 2), torch.ones(3, 2)),
    (torch.full((3, 2), 0.1), torch.ones(3, 2)),
]
