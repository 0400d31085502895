"""A RunningMean accumulator exposes __len__ (number of updates) and __bool__ (whether the
running total is positive); a compiled update step normalises its input only when truthy."""
import torch


class RunningMean:
    def __init__(self):
        self.total = torch.zeros(())
        self.count = 0

    def __len__(self):
        return self.count

    def __bool__(self):
        if self.total.sum() > 0:  # predicted: break
            return True
        return False

    def add(self, value):
        self.total = self.total + value.mean()
        self.count += 1


@torch.compile(backend="eager")
def update(stats, x):
    stats.add(x)
    if stats:
        return x / len(stats)
    return x * 0


def run(x):
    stats = RunningMean()
    out = update(stats, x)
    return out, stats.total, len(stats)


ENTRY = run
INPUTS = [
    (torch.arange(4.0),),
    (-torch.ones(3),),
]
