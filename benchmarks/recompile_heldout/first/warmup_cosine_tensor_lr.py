"""Manual SGD with linear warmup + cosine decay, the lr handed to a compiled update as a tensor."""
import math
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(16, 1)
params = list(model.parameters())


@torch.compile(backend="eager")
def sgd_update(grads, lr):
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.sub_(lr * g)


def lr_at(step, warmup=5, total=30, base=0.1):
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / (total - warmup)
    return 0.5 * base * (1 + math.cos(math.pi * progress))


lr_t = torch.tensor(0.0)
for step in range(30):
    x, y = torch.randn(32, 16), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, params)
    lr_t.fill_(lr_at(step))
    sgd_update(grads, lr_t)
