"""A DataLoader without `drop_last`: 10 samples in batches of 4 end with a batch of 2, one shape
recompile; Dynamo then marks the batch dimension dynamic."""

import torch
from torch.utils.data import DataLoader, TensorDataset


@torch.compile(backend="eager")
def train_step(batch):  # recompile: shape
    return batch.sin().mean()


dataset = TensorDataset(torch.randn(10, 3))
loader = DataLoader(dataset, batch_size=4, shuffle=False)
for epoch in range(2):
    for (batch,) in loader:
        train_step(batch)
