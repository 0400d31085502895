"""A Batch dataclass stamps its creation time and caches its largest label in __post_init__;
a compiled collate step builds a batch and scores it."""
import dataclasses
import time

import torch


@dataclasses.dataclass
class Batch:
    inputs: torch.Tensor
    labels: torch.Tensor
    weight: float = 1.0

    def __post_init__(self):
        self.created_at = time.time()  # predicted: break
        self.max_label = self.labels.max().item()  # predicted: break
        self.size = self.inputs.shape[0]


@torch.compile(backend="eager")
def collate_and_score(x, y, weight):
    batch = Batch(inputs=x * 2, labels=y, weight=weight)
    score = (batch.inputs * batch.labels).sum() / batch.size
    if batch.weight < 1.0:
        score = score * batch.weight
    return score + batch.max_label


ENTRY = collate_and_score
INPUTS = [
    (torch.arange(4.0), torch.ones(4), 0.5),
    (-torch.ones(3), torch.arange(3.0), 1.0),
]
