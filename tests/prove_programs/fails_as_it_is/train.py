"""Scores batches, then fails on a missing file, as a script with a wrong path does."""

import torch

from model import Scorer

torch.manual_seed(1234)
scorer = torch.compile(Scorer(), backend="eager")
for step in range(4):
    scores = scorer(torch.randn(4, 8) + (1 if step % 2 else -1))
    print(f"batch {step}: {scores.sum().item():.5f}")
open("missing-checkpoint.pt", "rb")
