import torch

from model import Net

model = torch.compile(Net(), backend="eager")
for step in range(2):
    model(torch.randn(4, 8))
