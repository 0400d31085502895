"""Clock reads, Python's `random` and stream writes in a compiled forward, as in research training
code that times a layer or draws a coin in Python (`if random.random() < p:` for stochastic depth)."""
import random
import sys
import time
from datetime import datetime
from time import perf_counter as clock

import torch


class Timed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 2)

    def forward(self, x):
        start = clock()  # dynamo: break
        h = self.layer(x)
        self.elapsed = time.time() - start  # dynamo: break
        random.seed(0)  # dynamo: break
        if random.random() < 2.0:  # dynamo: break
            h = h * 2
        sys.stderr.write("")  # dynamo: break
        self.stamp = datetime.now()  # dynamo: break
        return h


ENTRY = torch.compile(Timed(), backend="eager")
INPUTS = [
    (torch.ones(1, 2),),
]
