import torch

from .model import LongRope

ENTRY = torch.compile(LongRope(), backend="eager")
INPUTS = [(torch.ones(2), torch.arange(2)), (torch.ones(2), torch.arange(5)), (torch.ones(2), torch.arange(3))]
