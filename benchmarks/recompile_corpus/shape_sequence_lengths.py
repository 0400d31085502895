"""Sequences of several lengths through one compiled encoder: one recompile for the second length,
then the length is dynamic."""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, tokens):  # recompile: shape
        return self.norm(self.embed(tokens)).mean(dim=1)


encoder = torch.compile(Encoder(), backend="eager")
for length in (5, 9, 12, 7):
    encoder(torch.randint(0, 32, (2, length)))
