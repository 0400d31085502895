"""A classifier that logs its accuracy from inside forward (torchmetrics' functional API)."""

import torch
from torch import nn
from torchmetrics.functional import accuracy


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))

    def forward(self, x, target):
        logits = self.body(x)
        acc = accuracy(logits.argmax(-1), target, task="multiclass", num_classes=5)
        loss = nn.functional.cross_entropy(logits, target)
        return loss, acc


model = torch.compile(Classifier())


def inputs():
    return [(torch.randn(8, 16), torch.randint(0, 5, (8,)))]
