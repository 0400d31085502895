"""Toy mixture-of-experts layer with a load-balancing loss where routing starts at top-2 and is annealed to top-1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoE(nn.Module):
    def __init__(self, d=32, n_experts=4, top_k=2):
        super().__init__()
        self.router = nn.Linear(d, n_experts)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, d)) for _ in range(n_experts))
        self.top_k = top_k

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            gate = (weights * (chosen == e)).sum(-1, keepdim=True)
            out = out + gate * expert(x)
        load = F.one_hot(chosen[:, 0], probs.shape[-1]).float().mean(0)
        aux = probs.shape[-1] * (load * probs.mean(0)).sum()
        return out, aux


moe = MoE()
head = nn.Linear(32, 1)
moe_c = torch.compile(moe, backend="eager")
opt = torch.optim.Adam(list(moe.parameters()) + list(head.parameters()), lr=1e-3)
for epoch in range(4):
    moe.top_k = 2 if epoch < 2 else 1
    for it in range(3):
        x = torch.randn(128, 32)
        y = x[:, :1] * 2 - x[:, 1:2]
        h, aux = moe_c(x)
        loss = F.mse_loss(head(h), y) + 0.01 * aux
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} top_k {moe.top_k} loss {loss.item():.4f} aux {aux.item():.3f}")
