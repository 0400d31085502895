import torch

from .model import Model

ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.tensor([0, 1]),), (torch.tensor([1, 1]),), (torch.tensor([0, 1]), torch.ones(2))]
