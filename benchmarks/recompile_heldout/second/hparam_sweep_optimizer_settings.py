"""Random search over learning rate, weight decay and betas, compiling a fixed-architecture model per trial."""
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)
X, y = torch.randn(96, 12), torch.randint(0, 3, (96,))

def make_model():
    return nn.Sequential(nn.Linear(12, 48), nn.Tanh(), nn.Linear(48, 3))

def objective(trial_cfg):
    model = make_model()
    model.compile(backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=trial_cfg["lr"],
                            weight_decay=trial_cfg["wd"], betas=(trial_cfg["beta1"], 0.999))
    for epoch in range(4):
        for i in range(0, 96, 32):
            loss = F.cross_entropy(model(X[i:i + 32]), y[i:i + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()

best = None
for trial in range(5):
    cfg = {"lr": 10 ** random.uniform(-4, -1), "wd": random.choice([0.0, 0.01, 0.1]),
           "beta1": random.choice([0.8, 0.9])}
    score = objective(cfg)
    print(trial, {k: round(v, 5) for k, v in cfg.items()}, round(score, 4))
    if best is None or score < best[0]:
        best = (score, cfg)
print("best", best)
