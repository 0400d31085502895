"""Metric learning with a miner choosing the hard pairs (pytorch-metric-learning)."""

import torch
from pytorch_metric_learning import losses, miners
from torch import nn


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 8)
        self.miner = miners.MultiSimilarityMiner(epsilon=0.1)
        self.loss_fn = losses.ContrastiveLoss()

    def forward(self, x, labels):
        emb = self.net(x)
        pairs = self.miner(emb, labels)
        return self.loss_fn(emb, labels, pairs)


model = torch.compile(Embedder())


def inputs():
    return [(torch.randn(12, 16), torch.tensor([0, 0, 1, 1, 2, 2, 0, 1, 2, 0, 1, 2]))]
