"""A tiny-config T5 trained for a few steps under torch.compile (random weights, no download):
prints one JSON line with the first step's time (compile-heavy) and the median of the rest."""

from __future__ import annotations

import json
import statistics
import sys
import time

import torch
from transformers import T5Config, T5ForConditionalGeneration

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
BACKEND = sys.argv[2] if len(sys.argv) > 2 else "eager"

torch.manual_seed(0)
config = T5Config(
    vocab_size=256,
    d_model=64,
    d_kv=16,
    d_ff=128,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=4,
    decoder_start_token_id=0,
    pad_token_id=0,
)
model = T5ForConditionalGeneration(config)
model.train()
compiled = torch.compile(model, backend=BACKEND)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
inputs = torch.randint(1, 256, (4, 16))
labels = torch.randint(1, 256, (4, 8))
times = []
for _ in range(STEPS):
    start = time.perf_counter()
    loss = compiled(input_ids=inputs, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    times.append(time.perf_counter() - start)
print(json.dumps({"first_step_s": times[0], "steady_step_s": statistics.median(times[2:])}))
