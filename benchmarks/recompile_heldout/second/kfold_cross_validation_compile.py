"""K-fold cross-validation that rebuilds, torch.compiles and trains a fresh MLP per fold."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X, y = torch.randn(120, 10), torch.randint(0, 2, (120,))
k = 4
fold_size = len(X) // k

def build_model():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))

scores = []
for fold in range(k):
    val_idx = torch.arange(fold * fold_size, (fold + 1) * fold_size)
    train_mask = torch.ones(len(X), dtype=torch.bool)
    train_mask[val_idx] = False
    Xtr, ytr, Xva, yva = X[train_mask], y[train_mask], X[val_idx], y[val_idx]

    model = torch.compile(build_model(), backend="eager")
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(5):
        for i in range(0, len(Xtr), 30):
            loss = F.cross_entropy(model(Xtr[i:i + 30]), ytr[i:i + 30])
            opt.zero_grad()
            loss.backward()
            opt.step()
    preds = model(Xva).argmax(-1)
    scores.append((preds == yva).float().mean().item())
    print(f"fold {fold}: acc {scores[-1]:.3f}")
print("mean acc", sum(scores) / k)
