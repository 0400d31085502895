"""Metric learning: an embedder trained with a triplet loss (pytorch-metric-learning)."""

import torch
from pytorch_metric_learning import losses
from torch import nn


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8))
        self.loss_fn = losses.TripletMarginLoss(margin=0.2)

    def forward(self, x, labels):
        emb = self.net(x)
        return self.loss_fn(emb, labels)


model = torch.compile(Embedder())


def inputs():
    return [(torch.randn(12, 20), torch.tensor([0, 0, 1, 1, 2, 2, 0, 1, 2, 0, 1, 2]))]
