"""DQN-style update on a synthetic replay buffer where the n-step horizon and discount change across training phases."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
OBS, ACTIONS, BUF, BATCH, MAX_N = 8, 4, 2048, 64, 5

q_net = nn.Sequential(nn.Linear(OBS, 128), nn.ReLU(), nn.Linear(128, ACTIONS))
target_net = copy.deepcopy(q_net).requires_grad_(False)
q_compiled = torch.compile(q_net, backend="eager")
opt = torch.optim.Adam(q_net.parameters(), lr=5e-4)

obs = torch.randn(BUF, OBS)
actions = torch.randint(0, ACTIONS, (BUF,))
rewards = torch.randn(BUF)
dones = torch.rand(BUF) < 0.05


def nstep_targets(idx, n, gamma):
    ret = torch.zeros(idx.shape[0])
    alive = torch.ones(idx.shape[0])
    for k in range(n):
        ret += alive * (gamma ** k) * rewards[idx + k]
        alive = alive * (~dones[idx + k]).float()
    with torch.no_grad():
        bootstrap = target_net(obs[idx + n]).max(-1).values
    return ret + alive * (gamma ** n) * bootstrap


phases = [(1, 0.99), (3, 0.99), (5, 0.97)]
for phase, (n, gamma) in enumerate(phases):
    for it in range(10):
        idx = torch.randint(0, BUF - MAX_N - 1, (BATCH,))
        target = nstep_targets(idx, n, gamma)
        q = q_compiled(obs[idx]).gather(1, actions[idx, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    target_net.load_state_dict(q_net.state_dict())
    print(f"phase {phase} n={n} gamma={gamma} loss {loss.item():.4f}")
