"""Character-level GPT-style training loop with periodic loss estimation and cosine lr decay."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(1337)
data = torch.randint(0, 32, (2000,))
block_size, batch_size, max_iters, eval_interval, eval_iters = 16, 8, 30, 10, 3
learning_rate, warmup_iters, min_lr = 1e-3, 5, 1e-4

def get_batch(split):
    d = data[:1800] if split == "train" else data[1800:]
    ix = torch.randint(len(d) - block_size, (batch_size,))
    return torch.stack([d[i:i + block_size] for i in ix]), torch.stack([d[i + 1:i + 1 + block_size] for i in ix])

class TinyGPT(nn.Module):
    def __init__(self, vocab=32, n_embd=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, n_embd)
        self.drop = nn.Dropout(0.1)
        self.block = nn.TransformerEncoderLayer(n_embd, 2, 64, dropout=0.1, batch_first=True)
        self.head = nn.Linear(n_embd, vocab)
    def forward(self, idx, targets=None):
        x = self.block(self.drop(self.tok(idx)))
        logits = self.head(x)
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

model = TinyGPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
model = torch.compile(model, backend="eager")

@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            _, loss = model(*get_batch(split))
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out

def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    decay_ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)

for it in range(max_iters):
    for param_group in optimizer.param_groups:
        param_group["lr"] = get_lr(it)
    if it % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {it}: train {losses['train']:.4f}, val {losses['val']:.4f}")
    _, loss = model(*get_batch("train"))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
