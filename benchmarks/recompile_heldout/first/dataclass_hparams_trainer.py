"""Small trainer driven by a dataclass of hyperparameters passed into a compiled training step."""
from dataclasses import dataclass
import torch
import torch.nn as nn


@dataclass
class HParams:
    hidden: int = 32
    lr: float = 0.05
    label_smoothing: float = 0.1
    grad_clip: float = 1.0
    epochs: int = 3


torch.manual_seed(0)
hp = HParams()
model = nn.Sequential(nn.Linear(12, hp.hidden), nn.ReLU(), nn.Linear(hp.hidden, 4))


@torch.compile(backend="eager")
def train_step(x, y, hp):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y, label_smoothing=hp.label_smoothing)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= hp.lr * p.grad.clamp(-hp.grad_clip, hp.grad_clip)
            p.grad = None
    return loss.detach()


for epoch in range(hp.epochs):
    for _ in range(5):
        x, y = torch.randn(16, 12), torch.randint(0, 4, (16,))
        train_step(x, y, hp)
