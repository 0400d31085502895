import torch

from .ops import normalize

ENTRY = torch.compile(normalize, backend="eager")
INPUTS = [(torch.tensor([3.0, -1.0]),), (torch.tensor([0.5, 0.25]),)]
