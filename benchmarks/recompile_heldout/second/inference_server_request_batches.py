"""Toy inference server that drains a request queue into batches of varying size for a compiled model."""
import queue
import torch
import torch.nn as nn

class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 16))
    def forward(self, x):
        return nn.functional.normalize(self.net(x), dim=-1)

model = torch.compile(Embedder().eval(), backend="eager")
requests = queue.Queue()
torch.manual_seed(0)
for rid, n in enumerate([3, 5, 2, 8, 1, 4, 7, 6, 2, 3, 5]):
    for j in range(n):
        requests.put((f"req{rid}-{j}", torch.randn(20)))

def serve(max_batch_size=8):
    served = 0
    while not requests.empty():
        batch = []
        while not requests.empty() and len(batch) < max_batch_size:
            batch.append(requests.get())
        ids, feats = zip(*batch)
        with torch.inference_mode():
            embs = model(torch.stack(feats))
        served += len(ids)
        print(f"served {len(ids)} requests, total {served}, first norm {embs[0].norm():.3f}")

serve(max_batch_size=5)
