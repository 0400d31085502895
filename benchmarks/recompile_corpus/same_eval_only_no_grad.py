"""Serving: a compiled model only ever called in eval mode under `torch.inference_mode()`."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2)).eval()
compiled = torch.compile(model, backend="eager")
requests = [torch.randn(4, 8) for _ in range(5)]
with torch.inference_mode():
    for request in requests:
        compiled(request)
