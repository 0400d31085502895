"""Inference server loop that pads each batch of incoming requests up to a fixed max batch size."""
import collections
import torch
import torch.nn as nn

MAX_BATCH = 8

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, 1)
    def forward(self, x):
        return torch.sigmoid(self.head(self.encoder(x))).squeeze(-1)

scorer = Scorer().eval()
compiled_scorer = torch.compile(scorer, backend="eager")
pending = collections.deque()
torch.manual_seed(0)
for arrival in [3, 8, 1, 5, 6, 2, 7, 4]:
    pending.extend(torch.randn(arrival, 32))

@torch.no_grad()
def handle_batch(items):
    n = len(items)
    x = torch.zeros(MAX_BATCH, 32)
    x[:n] = torch.stack(items)
    return compiled_scorer(x)[:n]

results = []
while pending:
    items = [pending.popleft() for _ in range(min(MAX_BATCH, len(pending)))]
    scores = handle_batch(items)
    results.extend(scores.tolist())
    print(f"batch of {len(items)} -> mean score {scores.mean():.3f}")
print(len(results), "requests scored")
