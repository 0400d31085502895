"""Self-supervised contrastive training with NT-Xent (pytorch-metric-learning)."""

import torch
from pytorch_metric_learning import losses
from torch import nn


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(24, 32), nn.ReLU(), nn.Linear(32, 16))
        self.loss_fn = losses.NTXentLoss(temperature=0.1)

    def forward(self, view_a, view_b):
        za, zb = self.encoder(view_a), self.encoder(view_b)
        emb = torch.cat([za, zb])
        labels = torch.arange(za.shape[0]).repeat(2)
        return self.loss_fn(emb, labels)


model = torch.compile(SimCLR())


def inputs():
    return [(torch.randn(6, 24), torch.randn(6, 24))]
