"""Byte-level causal transformer LM trained on a text string with a context length (block_size) that grows during training."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = ("the quick brown fox jumps over the lazy dog. " * 60).encode()
data = torch.tensor(list(text), dtype=torch.long)
MAX_BLOCK = 64


class CharLM(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.tok = nn.Embedding(256, d)
        self.pos = nn.Embedding(MAX_BLOCK, d)
        layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2)
        self.lm_head = nn.Linear(d, 256)

    def forward(self, idx):
        T = idx.shape[1]
        h = self.tok(idx) + self.pos(torch.arange(T))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        return self.lm_head(self.blocks(h, mask=mask, is_causal=True))


model = CharLM()
model = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(9):
    block_size = 16 if step < 3 else (32 if step < 6 else 64)
    ix = torch.randint(0, len(data) - block_size - 1, (16,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 2:
        print(f"step {step} block_size {block_size} loss {loss.item():.3f}")
