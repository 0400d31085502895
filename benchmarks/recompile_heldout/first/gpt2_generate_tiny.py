"""Batch text generation with HF generate on a tiny GPT-2 whose forward is compiled."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64,
                    bos_token_id=0, eos_token_id=1, pad_token_id=1)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward, backend="eager")


def generate_batch(prompts):
    attention_mask = torch.ones_like(prompts)
    with torch.no_grad():
        return model.generate(prompts, attention_mask=attention_mask,
                              max_new_tokens=6, do_sample=False)


outputs = []
for _ in range(2):
    prompts = torch.randint(2, 50, (3, 5))
    outputs.append(generate_batch(prompts))
