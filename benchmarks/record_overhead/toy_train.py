"""The structured-trace note's toy program (a module calling a "library" with a data-dependent
branch and a print, and a Python int that recompiles), on four batch shapes, then 20 steady
steps: prints the first call's time (the compiles) and the median steady step as JSON."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import toylib  # noqa: E402


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, scale: int) -> torch.Tensor:
        h = self.lin(x)
        h = toylib.helper(h)
        h = toylib.noisy(h)
        if scale > 1:
            h = h * scale
        return h.sum()


m = torch.compile(M(), backend="eager")
start = time.perf_counter()
for bs, scale in [(4, 1), (4, 2), (5, 3), (6, 4)]:
    m(torch.randn(bs, 8), scale)
first = time.perf_counter() - start
steps = []
for _ in range(20):
    start = time.perf_counter()
    m(torch.randn(6, 8), 4)
    steps.append(time.perf_counter() - start)
print(json.dumps({"first_step_s": first, "steady_step_s": statistics.median(steps)}))
