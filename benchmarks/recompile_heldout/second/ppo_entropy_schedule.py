"""PPO-style actor-critic update with a linearly annealed entropy coefficient passed to a compiled loss."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

obs_dim, n_actions, n_steps, num_updates = 4, 2, 32, 6
ent_coef_start, ent_coef_end, clip_coef, vf_coef = 0.01, 0.0, 0.2, 0.5

class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

agent = ActorCritic()
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4)

@torch.compile(backend="eager")
def ppo_loss(obs, actions, old_logprobs, advantages, returns, ent_coef):
    dist = Categorical(logits=agent.actor(obs))
    ratio = (dist.log_prob(actions) - old_logprobs).exp()
    pg_loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    v_loss = 0.5 * ((agent.critic(obs).squeeze(-1) - returns) ** 2).mean()
    return pg_loss - ent_coef * dist.entropy().mean() + vf_coef * v_loss

for update in range(num_updates):
    frac = 1.0 - update / num_updates
    ent_coef = ent_coef_end + frac * (ent_coef_start - ent_coef_end)
    with torch.no_grad():
        obs = torch.randn(n_steps, obs_dim)
        dist = Categorical(logits=agent.actor(obs))
        actions = dist.sample()
        logprobs = dist.log_prob(actions)
        rewards = torch.randn(n_steps)
        values = agent.critic(obs).squeeze(-1)
        returns = rewards + 0.99 * values
        advantages = returns - values
    loss = ppo_loss(obs, actions, logprobs, advantages, returns, ent_coef)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(update, round(loss.item(), 4))
