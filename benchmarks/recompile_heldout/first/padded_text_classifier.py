"""Bag-of-embeddings text classifier trained on variable-length sentences padded to a fixed length."""
import torch
import torch.nn as nn

torch.manual_seed(0)
MAX_LEN, PAD = 24, 0


class TextClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.fc = nn.Linear(dim, 2)

    def forward(self, ids, mask):
        e = self.emb(ids) * mask.unsqueeze(-1)
        pooled = e.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.fc(pooled)


def collate(sentences):
    ids = torch.full((len(sentences), MAX_LEN), PAD, dtype=torch.long)
    for i, s in enumerate(sentences):
        ids[i, : len(s)] = torch.tensor(s[:MAX_LEN])
    return ids, (ids != PAD).float()


model = TextClassifier()
model.compile(backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(15):
    lengths = torch.randint(3, MAX_LEN, (8,)).tolist()
    batch = [torch.randint(1, 200, (n,)).tolist() for n in lengths]
    ids, mask = collate(batch)
    labels = torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(ids, mask), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
