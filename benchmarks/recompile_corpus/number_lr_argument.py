"""A learning rate from a schedule passed to a compiled update as a Python float: Dynamo guards
`lr == 0.1` at its use, recompiles once for the second value, then treats it as dynamic."""

import torch


@torch.compile(backend="eager")
def sgd_update(weight, grad, lr):
    return weight - lr * grad  # recompile: number


weight = torch.ones(8)
for step in range(6):
    lr = 0.1 * 0.9**step
    weight = sgd_update(weight, torch.full((8,), 0.5), lr)
