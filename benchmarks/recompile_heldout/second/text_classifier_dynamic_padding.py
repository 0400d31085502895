"""Text classifier trained with a pad_sequence collate_fn that pads each batch to its longest sequence."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD = 0
g = torch.Generator().manual_seed(0)
dataset = [(torch.randint(1, 200, (int(torch.randint(3, 20, (1,), generator=g)),), generator=g), i % 3)
           for i in range(96)]

def collate_batch(batch):
    seqs, labels = zip(*batch)
    return pad_sequence(seqs, batch_first=True, padding_value=PAD), torch.tensor(labels)

class BagClassifier(nn.Module):
    def __init__(self, vocab=200, dim=32, n_cls=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.fc = nn.Linear(dim, n_cls)
    def forward(self, tokens):
        mask = (tokens != PAD).unsqueeze(-1).float()
        pooled = (self.emb(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.fc(pooled)

model = torch.compile(BagClassifier(), backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collate_batch)
for epoch in range(2):
    for tokens, labels in loader:
        loss = nn.functional.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, round(loss.item(), 4))
