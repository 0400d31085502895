"""A Metrics accumulator echoes every attribute update through its __setattr__; a compiled
training step records the loss and accuracy of a tiny regression on it."""
import torch


class Metrics:
    def __init__(self):
        object.__setattr__(self, "history", [])

    def __setattr__(self, name, value):
        print(f"metric {name} updated")  # predicted: break
        self.history.append(name)
        object.__setattr__(self, name, value)


@torch.compile(backend="eager")
def train_step(x, target, metrics):
    pred = torch.tanh(x * 0.5)
    loss = ((pred - target) ** 2).mean()
    metrics.loss = loss
    metrics.acc = (pred.sign() == target.sign()).float().mean()
    return loss * 2


def run(x, target):
    m = Metrics()
    out = train_step(x, target, m)
    return out, m.loss, m.acc, list(m.history)


ENTRY = run
INPUTS = [
    (torch.arange(4.0), torch.ones(4)),
    (-torch.ones(3), torch.ones(3)),
]
