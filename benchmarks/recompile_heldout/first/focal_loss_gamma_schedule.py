"""Classifier trained with a compiled focal loss whose auxiliary weight ramps up linearly."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(16, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)


@torch.compile(backend="eager")
def focal_loss(logits, target, aux_weight):
    logp = F.log_softmax(logits, dim=-1)
    pt = logp.gather(1, target[:, None]).exp().squeeze(1)
    focal = -((1 - pt) ** 2 * pt.log()).mean()
    entropy = -(logp.exp() * logp).sum(-1).mean()
    return focal + aux_weight * entropy


total_steps = 20
for step in range(total_steps):
    x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))
    aux_weight = 0.5 * step / total_steps
    loss = focal_loss(model(x), y, aux_weight)
    opt.zero_grad()
    loss.backward()
    opt.step()
