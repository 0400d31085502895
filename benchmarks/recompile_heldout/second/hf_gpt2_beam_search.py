"""Beam search decoding with a tiny randomly initialised GPT-2 whose forward is torch.compiled."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64,
                    bos_token_id=0, eos_token_id=1, pad_token_id=1)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward, backend="eager")

prompts = torch.randint(2, 50, (2, 5))
with torch.no_grad():
    out = model.generate(
        prompts,
        attention_mask=torch.ones_like(prompts),
        max_new_tokens=6,
        num_beams=3,
        early_stopping=True,
        do_sample=False,
    )
print(out.shape)
print(out.tolist())
