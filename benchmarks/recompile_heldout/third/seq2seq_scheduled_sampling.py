"""GRU seq2seq on a toy copy-reverse task with scheduled sampling; the teacher-forcing decisions arrive as a boolean mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, T, B, BOS = 20, 10, 32, 0


class Seq2Seq(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        self.enc = nn.GRU(d, d, batch_first=True)
        self.dec_cell = nn.GRUCell(d, d)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, src, tgt, tf_mask):
        _, h = self.enc(self.emb(src))
        h = h[0]
        tok = torch.full((src.shape[0],), BOS, dtype=torch.long)
        logits = []
        for t in range(tgt.shape[1]):
            h = self.dec_cell(self.emb(tok), h)
            step_logits = self.out(h)
            logits.append(step_logits)
            tok = torch.where(tf_mask[:, t], tgt[:, t], step_logits.argmax(-1))
        return torch.stack(logits, 1)


model = Seq2Seq()
step_fn = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
total = 30
for step in range(total):
    ratio = max(0.0, 1.0 - step / (0.8 * total))  # teacher forcing decays to 0
    src = torch.randint(1, VOCAB, (B, T))
    tgt = src.flip(1)
    tf_mask = torch.rand(B, T) < ratio
    logits = step_fn(src, tgt, tf_mask)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} tf_ratio {ratio:.2f} loss {loss.item():.3f}")
