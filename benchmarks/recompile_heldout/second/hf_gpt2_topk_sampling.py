"""Top-k / nucleus sampling from a tiny GPT-2 built from a config and wrapped with torch.compile."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=50, n_positions=64,
                    bos_token_id=0, eos_token_id=1, pad_token_id=1)
model = GPT2LMHeadModel(config).eval()
compiled_model = torch.compile(model, backend="eager")

prompt_batches = [torch.randint(2, 50, (2, 4)), torch.randint(2, 50, (3, 7))]
with torch.no_grad():
    for prompts in prompt_batches:
        out = compiled_model.generate(
            prompts,
            attention_mask=torch.ones_like(prompts),
            do_sample=True,
            top_k=10,
            top_p=0.9,
            temperature=0.8,
            max_new_tokens=8,
        )
        print(out.shape, out[0].tolist())
