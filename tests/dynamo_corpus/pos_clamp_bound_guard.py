"""Clip values above a bound, but only test-first: `if x.max() > c: x[x > c] = c`. The test of an
extreme holds exactly when the write's mask has a true element, so the test can go."""
import torch


@torch.compile(backend="eager")
def clip_scores(scores, bound: float):
    scores = scores * 2
    if scores.max() > bound:  # dynamo: break
        scores[scores > bound] = bound
    return scores.softmax(-1)


ENTRY = clip_scores
INPUTS = [
    (torch.tensor([[0.1, 3.0, 0.2]]), 1.0),
    (torch.tensor([[0.1, 0.3, 0.2]]), 1.0),
]
