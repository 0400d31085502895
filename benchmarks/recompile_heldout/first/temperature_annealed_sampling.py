"""Sampling from a small policy head with a softmax temperature annealed over rounds, stored as a tensor."""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 6))
temperature = torch.tensor(2.0)


@torch.compile(backend="eager")
def sample(obs, temp):
    logits = policy(obs) / temp
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1).squeeze(-1), probs


for rnd in range(15):
    obs = torch.randn(10, 8)
    with torch.no_grad():
        actions, probs = sample(obs, temperature)
    temperature = torch.clamp(temperature * 0.85, min=0.3)
