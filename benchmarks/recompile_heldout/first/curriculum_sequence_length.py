"""Curriculum training of a small 1D-conv classifier where the max sequence length grows each stage."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SeqClassifier(nn.Module):
    def __init__(self, vocab=100, dim=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        h = torch.relu(self.conv(self.emb(tokens).transpose(1, 2)))
        return self.head(h.mean(dim=2))


model = SeqClassifier()
model = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)

curriculum = [8, 16, 24, 32]
for stage, max_len in enumerate(curriculum):
    for _ in range(3):
        tokens = torch.randint(0, 100, (16, max_len))
        labels = torch.randint(0, 3, (16,))
        loss = nn.functional.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
