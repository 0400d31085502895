"""Epsilon-greedy DQN-style action selection with a decaying exploration rate."""
import torch
import torch.nn as nn

torch.manual_seed(0)
q_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))


@torch.compile(backend="eager")
def select_action(obs, epsilon):
    q = q_net(obs)
    greedy = q.argmax(dim=-1)
    rand = torch.randint(0, 2, greedy.shape)
    explore = torch.rand(greedy.shape) < epsilon
    return torch.where(explore, rand, greedy)


epsilon = 1.0
eps_min, eps_decay = 0.05, 0.9
for episode in range(12):
    obs = torch.randn(8, 4)
    for t in range(5):
        actions = select_action(obs, epsilon)
        obs = obs + 0.1 * actions.unsqueeze(-1).float()
    epsilon = max(eps_min, epsilon * eps_decay)
