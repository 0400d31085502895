"""Scores batches and prints a run id of its own making: different in every run, as a wandb or
experiment-tracker id is, and no clock pattern graphmend knows."""

import os

import torch

from model import Scorer

print(f"run {os.urandom(6).hex()}")
torch.manual_seed(1234)
scorer = torch.compile(Scorer(), backend="eager")
for step in range(4):
    scores = scorer(torch.randn(4, 8) + (1 if step % 2 else -1))
    print(f"batch {step}: {scores.sum().item():.5f}")
