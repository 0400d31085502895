"""nanoGPT-style autoregressive generation with temperature and top-k over a cropped context window."""
import torch
import torch.nn as nn
import torch.nn.functional as F

block_size, vocab_size = 16, 40

class TinyLM(nn.Module):
    def __init__(self, n_embd=32):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.mix = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)
    def forward(self, idx):
        pos = torch.arange(idx.size(1))
        x = self.wte(idx) + self.wpe(pos)
        x = x + torch.tanh(self.mix(x.cumsum(1) / (pos[:, None] + 1)))
        return self.lm_head(x)

model = torch.compile(TinyLM().eval(), backend="eager")

@torch.no_grad()
def generate(idx, max_new_tokens, temperature=1.0, top_k=None):
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits = model(idx_cond)[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
    return idx

torch.manual_seed(42)
context = torch.randint(0, vocab_size, (2, block_size))
out = generate(context, max_new_tokens=12, temperature=0.8, top_k=5)
print(out[:, block_size:].tolist())
