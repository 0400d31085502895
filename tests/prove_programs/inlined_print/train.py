import torch

from model import Net

model = Net()
compiled = torch.compile(model, backend="eager")
for step in range(3):
    compiled(torch.randn(4, 8))
