"""A DataLoader with `drop_last=True`: every batch has the same shape, one graph."""

import torch
from torch.utils.data import DataLoader, TensorDataset


@torch.compile(backend="eager")
def train_step(batch):
    return batch.sin().mean()


dataset = TensorDataset(torch.randn(10, 3))
loader = DataLoader(dataset, batch_size=4, shuffle=False, drop_last=True)
for epoch in range(2):
    for (batch,) in loader:
        train_step(batch)
