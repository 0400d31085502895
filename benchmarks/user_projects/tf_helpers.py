"""A user model that borrows transformers' activation table and chunked feed-forward helper."""

import torch
from torch import nn
from transformers.activations import ACT2FN
from transformers.pytorch_utils import apply_chunking_to_forward


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(16, 64)
        self.down = nn.Linear(64, 16)
        self.act = ACT2FN["gelu_new"]

    def ff(self, hidden):
        return self.down(self.act(self.up(hidden)))

    def forward(self, hidden):
        return hidden + apply_chunking_to_forward(self.ff, 2, 1, hidden)


model = torch.compile(Block())


def inputs():
    return [(torch.randn(2, 8, 16),)]
