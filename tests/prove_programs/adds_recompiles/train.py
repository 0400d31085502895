import torch

from model import Net

model = torch.compile(Net(), backend="eager")
for step in range(4):
    model(torch.randn(4, 8), step + 2)
