"""Reads its thresholds from standard input, one per line."""

import sys

import torch

from model import step

x = torch.ones(3)
for line in sys.stdin:
    x = step(x, torch.tensor(float(line)))
    print(x.tolist())
