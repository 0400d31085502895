"""A hand-written greedy decoding loop over a compiled transformers model: the sequence grows by
one token a step, one shape recompile, then the length is dynamic."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64)).eval()
compiled = torch.compile(model, backend="eager")
ids = torch.randint(0, 50, (1, 5))
with torch.no_grad():
    for _ in range(6):
        logits = compiled(ids).logits  # recompile: shape
        ids = torch.cat([ids, logits[:, -1:].argmax(-1)], dim=1)
