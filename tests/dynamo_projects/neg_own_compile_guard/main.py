import torch

from .model import Model

ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.zeros(2, 4),), (torch.ones(2, 4),)]
