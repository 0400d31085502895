import torch

from .model import Attention

ENTRY = torch.compile(Attention(), backend="eager")
INPUTS = [(torch.ones(3), torch.full((3,), 2.0)), (torch.ones(3), torch.full((3,), 0.5))]
