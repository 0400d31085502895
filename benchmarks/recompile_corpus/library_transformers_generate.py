"""transformers generation with a compiled `forward`: the prompt, then one token at a time with a
cache that grows, recompile inside the library's forward (placed at the `generate` call)."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward, backend="eager")
prompt = torch.randint(0, 50, (1, 5))
with torch.no_grad():
    model.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=0)  # recompile: shape
