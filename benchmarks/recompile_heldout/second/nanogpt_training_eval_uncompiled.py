"""GPT-style training loop that evaluates with the unoptimized model and decays lr per iteration."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
data = torch.randint(0, 64, (3000,))
block_size, batch_size, max_iters, eval_interval, eval_iters = 16, 8, 30, 10, 3
learning_rate, min_lr, lr_decay_iters = 6e-4, 6e-5, 30

def get_batch(split):
    d = data[:2700] if split == "train" else data[2700:]
    ix = torch.randint(len(d) - block_size, (batch_size,))
    return torch.stack([d[i:i + block_size] for i in ix]), torch.stack([d[i + 1:i + 1 + block_size] for i in ix])

class MLPLM(nn.Module):
    def __init__(self, vocab=64, n_embd=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.lm_head = nn.Linear(n_embd, vocab)
    def forward(self, idx, targets):
        h = self.wte(idx)
        logits = self.lm_head(h + self.mlp(h))
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())

model = MLPLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.1)
unoptimized_model = model
model = torch.compile(model, backend="eager")

@torch.no_grad()
def estimate_loss():
    out = {}
    unoptimized_model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            _, loss = unoptimized_model(*get_batch(split))
            losses[k] = loss.item()
        out[split] = losses.mean()
    unoptimized_model.train()
    return out

def get_lr(it):
    coeff = 0.5 * (1.0 + math.cos(math.pi * min(it, lr_decay_iters) / lr_decay_iters))
    return min_lr + coeff * (learning_rate - min_lr)

for iter_num in range(max_iters):
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if iter_num % eval_interval == 0:
        print(iter_num, {k: round(v.item(), 4) for k, v in estimate_loss().items()})
    logits, loss = model(*get_batch("train"))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
