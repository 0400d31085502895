"""Advantage actor-critic with an entropy coefficient kept as a tensor buffer and updated in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class A2CAgent(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU())
        self.pi = nn.Linear(64, n_actions)
        self.v = nn.Linear(64, 1)
        self.register_buffer("ent_coef", torch.tensor(0.05))

    def forward(self, obs, actions, returns):
        h = self.body(obs)
        logp = F.log_softmax(self.pi(h), dim=-1)
        entropy = -(logp.exp() * logp).sum(-1).mean()
        adv = returns - self.v(h).squeeze(-1)
        pg = -(logp.gather(1, actions[:, None]).squeeze(1) * adv.detach()).mean()
        return pg + 0.5 * adv.pow(2).mean() - self.ent_coef * entropy

agent = A2CAgent()
compiled_agent = torch.compile(agent, backend="eager")
opt = torch.optim.RMSprop(agent.parameters(), lr=7e-4)
total_updates = 8

for update in range(total_updates):
    obs = torch.randn(5, 16, 6).flatten(0, 1)
    actions = torch.randint(0, 3, (80,))
    rewards = torch.randn(5, 16)
    returns = torch.zeros_like(rewards)
    running = torch.zeros(16)
    for step in reversed(range(5)):
        running = rewards[step] + 0.99 * running
        returns[step] = running
    loss = compiled_agent(obs, actions, returns.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    agent.ent_coef.fill_(0.05 * (1 - (update + 1) / total_updates))
    print(update, f"{loss.item():.4f}", f"{agent.ent_coef.item():.4f}")
