"""Greedy decoding loop (no KV cache) with a tiny randomly initialised GPT-2 compiled with torch.compile."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward, backend="eager")


@torch.no_grad()
def greedy(prompt, max_new_tokens=8):
    ids = prompt
    for _ in range(max_new_tokens):
        logits = model(input_ids=ids, use_cache=False).logits
        next_id = logits[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids


prompt = torch.randint(0, 50, (2, 4))
out = greedy(prompt)
