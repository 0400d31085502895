"""Two ranks on gloo: each trains a replica; gradients are averaged by hand."""

import torch
import torch.distributed as dist

from model import Net

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
net = Net()
model = torch.compile(net, backend="eager")
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8) * (rank + 1)
    model(x).sum().backward()
    for parameter in net.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= dist.get_world_size()
    optimizer.step()
    optimizer.zero_grad()
print(f"rank {rank} done")
dist.destroy_process_group()
