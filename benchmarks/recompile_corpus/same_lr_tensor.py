"""The schedule's learning rate passed as a 0-d tensor: a tensor's value is not guarded, one graph."""

import torch


@torch.compile(backend="eager")
def sgd_update(weight, grad, lr):
    return weight - lr * grad


weight = torch.ones(8)
lr = torch.tensor(0.1)
for step in range(6):
    lr.fill_(0.1 * 0.9**step)
    weight = sgd_update(weight, torch.full((8,), 0.5), lr)
