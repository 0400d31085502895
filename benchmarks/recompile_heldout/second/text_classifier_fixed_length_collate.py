"""Text classifier with a collate_fn that truncates/pads every sequence to a fixed max_length."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

PAD, MAX_LEN = 0, 24
g = torch.Generator().manual_seed(1)
dataset = [(torch.randint(1, 300, (int(torch.randint(4, 40, (1,), generator=g)),), generator=g), i % 2)
           for i in range(100)]

def collate_fixed(batch):
    ids = torch.full((len(batch), MAX_LEN), PAD, dtype=torch.long)
    for i, (seq, _) in enumerate(batch):
        seq = seq[:MAX_LEN]
        ids[i, :len(seq)] = seq
    labels = torch.tensor([label for _, label in batch])
    return {"input_ids": ids, "attention_mask": (ids != PAD).long(), "labels": labels}

class ConvTextClassifier(nn.Module):
    def __init__(self, vocab=300, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.out = nn.Linear(dim, 2)
    def forward(self, input_ids, attention_mask):
        h = F.relu(self.conv(self.emb(input_ids).transpose(1, 2))).transpose(1, 2)
        h = h.masked_fill(attention_mask.unsqueeze(-1) == 0, -1e4)
        return self.out(h.max(dim=1).values)

model = ConvTextClassifier()
model.compile(backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collate_fixed, drop_last=True)
for epoch in range(3):
    for batch in loader:
        logits = model(batch["input_ids"], batch["attention_mask"])
        loss = F.cross_entropy(logits, batch["labels"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
