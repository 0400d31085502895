import torch

from .model import Model

ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.tensor([[1, 2, 0]]),), (torch.tensor([[1, 2, 3]]),)]
