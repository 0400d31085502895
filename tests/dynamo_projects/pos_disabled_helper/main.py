import torch

from .model import Model

ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(2, 4),)]
